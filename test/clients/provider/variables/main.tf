# The tfe provider managing workspace variables and variable sets: tfe_variable on a
# workspace (terraform, env, HCL and sensitive), tfe_variable_set with a variable of its own, and
# tfe_workspace_variable_set applying it. Local state.
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

provider "tfe" {
  hostname = var.tfe_hostname
  token    = var.tfe_token
}

resource "tfe_workspace" "vars" {
  organization = var.organization
  name         = "prov-vars"
}

resource "tfe_variable" "region" {
  workspace_id = tfe_workspace.vars.id
  key          = "region"
  value        = "eu-west-1"
  category     = "terraform"
  description  = "Where the stack runs"
}

resource "tfe_variable" "log" {
  workspace_id = tfe_workspace.vars.id
  key          = "TF_LOG"
  value        = "info"
  category     = "env"
}

resource "tfe_variable" "sizes" {
  workspace_id = tfe_workspace.vars.id
  key          = "sizes"
  value        = "[1, 2, 3]"
  category     = "terraform"
  hcl          = true
}

resource "tfe_variable" "password" {
  workspace_id = tfe_workspace.vars.id
  key          = "db_password"
  value        = "clients-s3cret-value"
  category     = "terraform"
  sensitive    = true
}

resource "tfe_variable_set" "shared" {
  organization = var.organization
  name         = "clients-shared"
  description  = "Shared by the clients harness"
}

resource "tfe_variable" "shared" {
  variable_set_id = tfe_variable_set.shared.id
  key             = "SHARED_FLAG"
  value           = "yes"
  category        = "env"
}

resource "tfe_workspace_variable_set" "link" {
  variable_set_id = tfe_variable_set.shared.id
  workspace_id    = tfe_workspace.vars.id
}
