-- A web UI session's last request (to the half minute), for the organisations' idle session timeout
-- (`session-timeout`); its lifetime (`session-remember`) counts from `created_at`. NULL: none since it began.
ALTER TABLE ui_sessions ADD COLUMN last_seen_at TEXT;
