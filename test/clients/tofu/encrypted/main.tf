# OpenTofu state and plan encryption through the `cloud` block: the service stores only the encrypted envelope.
# The passphrase comes from TF_VAR_passphrase (variables are evaluated early for the encryption block).
terraform {
  cloud {
    workspaces {
      name = "tofu-encrypted"
    }
  }

  encryption {
    key_provider "pbkdf2" "passphrase" {
      passphrase = var.passphrase
      # The lowest count OpenTofu accepts: every command derives the key, and the default (600000) is slower.
      iterations = 200000
    }
    method "aes_gcm" "passphrase" {
      keys = key_provider.pbkdf2.passphrase
    }
    state {
      method   = method.aes_gcm.passphrase
      enforced = true
    }
    plan {
      method   = method.aes_gcm.passphrase
      enforced = true
    }
  }
}

variable "passphrase" {
  type      = string
  sensitive = true
}

resource "terraform_data" "first" {
  input = "tofu-enc-first-value"
}

resource "terraform_data" "second" {
  input = { name = "tofu-enc-second-value", first = terraform_data.first.output }
}

output "names" {
  value = [terraform_data.first.output, terraform_data.second.output.name]
}
