"""The stages of one turn, each a module: condense → retrieve (fuse, rerank, confidence) → …"""
