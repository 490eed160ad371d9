"""``trustindex keys generate``: the Ed25519 key pair that signs exports."""

from __future__ import annotations

ABOUT = "generate the Ed25519 key pair that signs exports"
EXAMPLES = ("trustindex keys generate --out keys/",)
OPTIONS: tuple[str, ...] = ()


def arguments(k) -> None:
    k.add_argument("action", choices=["generate"], help="what to do")
    k.add_argument("--out", required=True, metavar="DIR", help="writes DIR/signing.key (mode 0600) and signing.pub")


def run(a) -> int:
    from trustindex.schemas.signing import generate_keys, load_trusted_keys

    key, pub = generate_keys(a.out)
    kid = load_trusted_keys([pub])[0].key_id
    print(f"wrote {key} (private, mode 0600: keep it secret) and {pub} (key id {kid})")
    return 0
