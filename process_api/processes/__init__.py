"""Processes: what one is (`definition`), the built-ins (`echo`, `sleep`, and `s3-manifest`,
with the credentials, S3 and resources sections; `built_in`) and a deployment's registry
of them. Nothing is imported here: a deployed job's process reads a few definitions of this
package, and each of its imports is paid again by every sandbox started.

Third-party imports: `aiohttp`, `jsonschema`, `pydantic`, `pydantic_settings`, `s3fs`.
"""
