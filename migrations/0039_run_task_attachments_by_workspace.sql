-- A workspace's run task attachments are rewritten by its object's outbox (delete all of the workspace's, insert the
-- current ones), and leave with the workspace: both find them by workspace.
CREATE INDEX workspace_run_tasks_workspace ON workspace_run_tasks(workspace_id);
