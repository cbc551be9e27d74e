"""How many leading words name a shell command, for the ``always`` patterns of the bash tool.

When the user answers "always" to a bash ask, the rule stored is not the whole command line but its
"human" command followed by `` *``: ``git log --oneline -5`` gives ``git log *``, ``npm run dev`` gives
``npm run dev *``, ``ls -la`` gives ``ls *``. The table below (builtin-tools spec §2.3, OpenCode's
``permission/arity.ts`` as of v1.18.3) says, for a command or a command with sub-command, how many words
that human command has. The longest listed prefix of the words wins; a command that is not listed keeps
its first word only. Words are taken literally: options are not skipped.
"""

from __future__ import annotations

from collections.abc import Sequence

_ONE = """
    cat cd chmod chown cp echo env export grep kill killall ln ls mkdir mv ps pwd rm rmdir sleep source
    tail touch unset which
"""
_TWO = """
    bazel brew bun cargo cdk cf cmake composer consul crictl deno docker eksctl firebase flyctl git go
    gradle helm heroku hugo ip kind kubectl kustomize make mc minikube mongosh mysql mvn ng npm nvm nx
    openssl pip pipenv pnpm poetry podman psql pulumi pyenv python rake rbenv redis-cli rustup serverless
    skaffold sls sst swift systemctl terraform tmux turbo ufw vault vercel volta wp yarn
"""
_THREE = """
    aws az doctl gcloud gh sfdx
"""
#: Sub-commands whose human command is three words long (the parent itself has arity 2).
_THREE_WORD_SUBCOMMANDS = {
    "bun": "run x",
    "cargo": "add run",
    "consul": "kv",
    "deno": "task",
    "docker": "builder compose container image network volume",
    "eksctl": "create",
    "git": "config remote stash",
    "ip": "addr link netns route",
    "kind": "create",
    "kubectl": "kustomize rollout",
    "mc": "admin",
    "npm": "exec init run view",
    "openssl": "req x509",
    "pnpm": "dlx exec run",
    "podman": "container image",
    "pulumi": "stack",
    "terraform": "workspace",
    "vault": "auth kv",
    "yarn": "dlx run",
}


def _table() -> dict[str, int]:
    table: dict[str, int] = {}
    for words, arity in ((_ONE, 1), (_TWO, 2), (_THREE, 3)):
        table.update(dict.fromkeys(words.split(), arity))
    for parent, subs in _THREE_WORD_SUBCOMMANDS.items():
        table.update({f"{parent} {sub}": 3 for sub in subs.split()})
    return table


ARITY: dict[str, int] = _table()


def prefix(tokens: Sequence[str]) -> list[str]:
    """The leading words that name the command (see the module docstring); ``[]`` for no words."""
    for length in range(len(tokens), 0, -1):
        arity = ARITY.get(" ".join(tokens[:length]))
        if arity is not None:
            return list(tokens[:arity])
    return list(tokens[:1])


def always_pattern(tokens: Sequence[str]) -> str:
    """The rule pattern an "always" answer stores for a command with these words, e.g. ``git log *``."""
    return " ".join(prefix(tokens)) + " *"
