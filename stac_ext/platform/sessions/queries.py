"""Named SQL of the browser sessions (schema `sessions`)."""

OPEN = """
INSERT INTO sessions.sessions (id_hash, username, groups, rights, tokens, access_expires,
                               refresh_expires, expires)
VALUES ($1, $2, $3, $4, $5, to_timestamp($6), to_timestamp($7), to_timestamp($8))
"""

#: A live session (a past one is as good as none)
FIND = """
SELECT username, groups, rights, tokens, extract(epoch FROM access_expires) AS access_expires,
       extract(epoch FROM refresh_expires) AS refresh_expires,
       extract(epoch FROM expires) AS expires
FROM sessions.sessions WHERE id_hash = $1 AND expires > now()
"""

#: The same, locked: one refresh at a time, whichever API process asks
FIND_LOCKED = FIND + " FOR UPDATE"

REFRESHED = """
UPDATE sessions.sessions
SET username = $2, groups = $3, rights = $4, tokens = $5, access_expires = to_timestamp($6),
    refresh_expires = to_timestamp($7)
WHERE id_hash = $1
"""

CLOSE = "DELETE FROM sessions.sessions WHERE id_hash = $1"

SWEEP = "DELETE FROM sessions.sessions WHERE expires <= now()"
