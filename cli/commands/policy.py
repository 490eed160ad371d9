"""``trustindex policy --show``: the policy in force, as TOML."""

from __future__ import annotations

ABOUT = "show the policy in force"
EXAMPLES = ("trustindex policy --show", "trustindex policy --show --policy examples/policy.toml")
OPTIONS = ("policy",)


def arguments(po) -> None:
    po.add_argument("--show", action="store_true", required=True, help="print the policy as TOML")


def run(a) -> int:
    from trustindex.schemas.policy import Policy

    print(Policy.load(a.policy).to_toml(), end="")
    return 0
