"""Where things are: the checkout's root, whatever a test file's depth."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
