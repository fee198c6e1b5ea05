# The workspace is in `agent` execution mode with an organisation agent pool: an agent process of that pool runs it.
# Hostname and organization as in ../main.
terraform {
  cloud {
    workspaces {
      name = "rr-agent"
    }
  }
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 3.2"
    }
  }
}

resource "null_resource" "foo" {}
