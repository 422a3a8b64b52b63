"""OGC API Processes under `/processes`: the sub-app, job store, engine, built-in processes.

May import FastAPI, procrastinate and the standard library; never `stac_ext` or
`catalogs_ext`: the composition root hands it settings, the auth dependency and the pool.
"""
