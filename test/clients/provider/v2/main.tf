# The changed configuration (applied over v1): every managed attribute that v1 sets takes another value.
terraform {
  required_providers {
    tfe = {
      source = "hashicorp/tfe"
    }
  }
}

variable "tfe_hostname" {
  type = string
}

variable "tfe_token" {
  type      = string
  sensitive = true
}

variable "organization" {
  type = string
}

variable "outputs_workspace" {
  type = string
}

provider "tfe" {
  hostname = var.tfe_hostname
  token    = var.tfe_token
}

resource "tfe_project" "main" {
  organization = var.organization
  name         = "clients-provider-2"
  description  = "Project managed by terraform-provider-tfe, changed"
}

resource "tfe_workspace" "main" {
  organization      = var.organization
  name              = "prov-main"
  description       = "Workspace managed by terraform-provider-tfe, changed"
  auto_apply        = false
  project_id        = tfe_project.main.id
  working_directory = "infra/app2"
  terraform_version = "~> 1.10.0"
  tag_names         = ["clients-prov", "green"]
  tags = {
    stage = "prov-dev"
    owner = "platform"
  }
}

resource "tfe_workspace_settings" "main" {
  workspace_id   = tfe_workspace.main.id
  execution_mode = "remote"
}

resource "tfe_team" "writers" {
  organization = var.organization
  name         = "clients-writers"
}

resource "tfe_team" "custom" {
  organization = var.organization
  name         = "clients-custom"
}

resource "tfe_team_access" "writers" {
  access       = "read"
  team_id      = tfe_team.writers.id
  workspace_id = tfe_workspace.main.id
}

resource "tfe_team_access" "custom" {
  team_id      = tfe_team.custom.id
  workspace_id = tfe_workspace.main.id

  permissions {
    runs              = "apply"
    variables         = "write"
    state_versions    = "read"
    sentinel_mocks    = "read"
    workspace_locking = true
    run_tasks         = false
  }
}

resource "tfe_team_project_access" "writers" {
  access     = "write"
  team_id    = tfe_team.writers.id
  project_id = tfe_project.main.id
}

data "tfe_workspace" "main" {
  organization = var.organization
  name         = tfe_workspace.main.name
}

data "tfe_workspace_ids" "all" {
  organization = var.organization
  names        = ["*"]
  depends_on   = [tfe_workspace.main]
}

data "tfe_workspace_ids" "by_tag" {
  organization = var.organization
  tag_names    = ["clients-prov"]
  depends_on   = [tfe_workspace.main]
}

data "tfe_workspace_ids" "by_binding" {
  organization = var.organization
  tag_filters {
    include = { stage = "prov-dev" }
  }
  depends_on = [tfe_workspace.main]
}

data "tfe_project" "main" {
  organization = var.organization
  name         = tfe_project.main.name
  # It lists the project's workspaces: without this, Terraform may read it while the workspace is still being
  # created (a race in this configuration, not in the service).
  depends_on = [tfe_workspace.main]
}

data "tfe_outputs" "other" {
  organization = var.organization
  workspace    = var.outputs_workspace
}

output "workspace_id" {
  value = tfe_workspace.main.id
}

output "data_workspace" {
  value = {
    id                = data.tfe_workspace.main.id
    description       = data.tfe_workspace.main.description
    project_id        = data.tfe_workspace.main.project_id
    working_directory = data.tfe_workspace.main.working_directory
    terraform_version = data.tfe_workspace.main.terraform_version
    tag_names         = data.tfe_workspace.main.tag_names
  }
}

output "all_ids" {
  value = data.tfe_workspace_ids.all.ids
}

output "by_tag_ids" {
  value = data.tfe_workspace_ids.by_tag.ids
}

output "by_binding_ids" {
  value = data.tfe_workspace_ids.by_binding.ids
}

output "data_project" {
  value = { id = data.tfe_project.main.id, workspace_ids = data.tfe_project.main.workspace_ids }
}

output "other_outputs" {
  value     = data.tfe_outputs.other.values
  sensitive = true
}
