"""Transformer models: loading (Hugging Face checkpoints), export backends, the embedding cache, model2vec files."""
