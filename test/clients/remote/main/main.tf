# Remote operations: the workspace is in `remote` execution mode, so plan and apply run on the service's agent.
# The cloud block's hostname and organization come from TF_CLOUD_HOSTNAME / TF_CLOUD_ORGANIZATION (set by
# scripts/clients.mjs); hashicorp/null is the stand-in from test/clients/null-provider, installed from a mirror.
terraform {
  cloud {
    workspaces {
      name = "rr-main"
    }
  }
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 3.2"
    }
  }
}

# Sent as run variables (`-var`): a new generation replaces null_resource.foo.
variable "generation" {
  type    = string
  default = "1"
}

variable "bars" {
  type    = number
  default = 0
}

resource "null_resource" "foo" {
  triggers = {
    generation = var.generation
  }
}

resource "null_resource" "bar" {
  count = var.bars
  triggers = {
    index = count.index
  }
}
