// Preloaded with `node --require loopback.cjs`: a server told to listen on a bare port, as the everything
// server's `app.listen(PORT)` is, binds 127.0.0.1 only instead of every interface.
"use strict";
const net = require("node:net");

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  const barePort = typeof port === "number" || (typeof port === "string" && /^\d+$/.test(port));
  if (barePort && typeof args[1] !== "string") {
    args.splice(1, 0, "127.0.0.1");
  }
  return listen.apply(this, args);
};
