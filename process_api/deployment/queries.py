"""Named SQL of the deployed processes (`processes.deployed`)."""

#: Every process deployed now (its current revision).
CURRENT_DEPLOYED = "SELECT * FROM processes.deployed WHERE retired IS NULL"

DEPLOYED_NOW = "SELECT * FROM processes.deployed WHERE id = %(id)s AND retired IS NULL"

#: The id of the deployed process whose id is this one without regard to case (ids are
#: unique so: `deployed_current_without_case`).
DEPLOYED_ID_WITHOUT_CASE = """
SELECT id FROM processes.deployed WHERE lower(id) = lower(%(id)s) AND retired IS NULL
"""

DEPLOYED_REVISION = """
SELECT * FROM processes.deployed WHERE id = %(id)s AND revision = %(revision)s
"""

#: The current revision, locked: a replacement or undeployment waits for another one.
LOCK_DEPLOYED = """
SELECT * FROM processes.deployed WHERE id = %(id)s AND retired IS NULL FOR UPDATE
"""

RETIRE_DEPLOYED = """
UPDATE processes.deployed SET retired = now() WHERE id = %(id)s AND retired IS NULL
"""

#: A new revision (the first, or after the last one ever, retired or not).
INSERT_DEPLOYED = """
INSERT INTO processes.deployed (id, revision, owner, project, visibility, media_type, package,
                                cwl, description)
SELECT %(id)s, coalesce(max(revision), 0) + 1, %(owner)s, %(project)s, %(visibility)s,
       %(media_type)s, %(package)s, %(cwl)s, %(description)s
FROM processes.deployed WHERE id = %(id)s
RETURNING *
"""
