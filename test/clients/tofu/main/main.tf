# OpenTofu's `cloud` block; hostname and organization from TF_CLOUD_HOSTNAME / TF_CLOUD_ORGANIZATION (set by
# scripts/clients.mjs). Built-in resources only: terraform_data and a local-exec provisioner for slow applies.
terraform {
  cloud {
    workspaces {
      name = "tofu-main"
    }
  }
}

variable "generation" {
  type    = string
  default = "1"
}

variable "sleep_seconds" {
  type    = number
  default = 0
}

resource "terraform_data" "base" {
  input = { name = "tofu-base", count = 1 }
}

# Replaced whenever var.generation changes; its provisioner makes the apply as long as var.sleep_seconds.
resource "terraform_data" "slow" {
  triggers_replace = [var.generation]
  input            = "generation-${var.generation}"

  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

output "greeting" {
  value = "hello from tofu"
}

output "object" {
  value = { base = terraform_data.base.output.name, slow = terraform_data.slow.output }
}

output "secret" {
  value     = "t0fu-s3cr3t"
  sensitive = true
}
