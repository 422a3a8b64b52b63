"""Database lifecycle: the embedded cluster and schema migrations. Imports nothing of ours."""
