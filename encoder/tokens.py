"""Token counting with the embedding model's own WordPiece tokenizer (no torch)."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache


@lru_cache(maxsize=1)
def token_counter() -> Callable[[str], int]:
    from tokenizers import Tokenizer

    from trustindex.schemas.embedding_model import TOKENIZER_FILE, model_path

    tok = Tokenizer.from_file(str(model_path() / TOKENIZER_FILE))
    tok.no_truncation()
    tok.no_padding()
    return lambda text: len(tok.encode(text).ids)
