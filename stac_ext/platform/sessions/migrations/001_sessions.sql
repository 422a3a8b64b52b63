-- Browser sessions (the backend-for-frontend's): one row per signed-in browser. The cookie's
-- value is never stored, only its SHA-256; the tokens only sealed (JWE, the session key).
-- Only the API's role reads them: workers and jobs have no grant on this schema.

CREATE SCHEMA sessions;

CREATE TABLE sessions.sessions (
    id_hash bytea PRIMARY KEY,
    username text NOT NULL,
    groups text[] NOT NULL,
    rights text[] NOT NULL,
    tokens text NOT NULL,                 -- {"access_token", "refresh_token"}, sealed
    access_expires timestamptz NOT NULL,  -- refreshed shortly before
    refresh_expires timestamptz,          -- NULL: no refresh token, or no end given
    created timestamptz NOT NULL DEFAULT now(),
    expires timestamptz NOT NULL          -- the session's end, whatever the tokens say
);

-- expired sessions are swept at each sign-in
CREATE INDEX sessions_expires_idx ON sessions.sessions (expires);
