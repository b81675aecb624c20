"""The search-space store: import, validate, characterise exhaustively measured spaces."""
