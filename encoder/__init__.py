"""The encoder's build side: text in, vectors out.

The model's ONNX export and its int8 quantisation (``onnx_export``, ``static_quantization``), the embedders a build
runs (``factory``: the ONNX fast path and the sentence-transformers reference), the embedding cache keyed by content
hash (``embedding_cache``), the one embedding worker a refresh shares (``worker``), the pipeline that feeds it while
sources are extracted (``pipeline``) and the content-hash shards a Dask cluster embeds (``shards``).  The query side's
runtime (``query.onnx_encoder``) is the same code that embeds passages here.
"""
