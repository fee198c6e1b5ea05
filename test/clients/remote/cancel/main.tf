# Remote operations on a workspace whose env variable NULL_STANDIN_PLAN_SECONDS makes the stand-in's plan wait, so
# the run can be interrupted while it is planning. Hostname and organization as in ../main.
terraform {
  cloud {
    workspaces {
      name = "rr-cancel"
    }
  }
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 3.2"
    }
  }
}

resource "null_resource" "slow" {}
