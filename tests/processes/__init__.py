"""Tests of the process API and its engine (`process_api`), and publishing."""
