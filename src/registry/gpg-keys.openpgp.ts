/** OpenPGP with openpgp.js: a public key's id, and detached signatures checked as Terraform checks SHA256SUMS.sig. */
import { createMessage, readKey, readSignature, verify } from "openpgp";

/** The key id (16 uppercase hex digits, as the real service shows it) of an ASCII-armored public key, or null when it is none. */
export async function publicKeyId(armor: string): Promise<string | null> {
  try {
    const key = await readKey({ armoredKey: armor });
    if (key.isPrivate()) return null;
    return key.getKeyID().toHex().toUpperCase();
  } catch {
    return null;
  }
}

/**
 * Whether `signature` (binary, as `gpg --detach-sign` writes it, the form Terraform reads) is a valid signature of
 * `data` by the armored key or one of its subkeys.
 */
export async function verifiesDetached(armor: string, data: Uint8Array, signature: Uint8Array): Promise<boolean> {
  try {
    const key = await readKey({ armoredKey: armor });
    const sig = await readSignature({ binarySignature: signature });
    const { signatures } = await verify({ message: await createMessage({ binary: data }), signature: sig, verificationKeys: key });
    if (signatures.length === 0) return false;
    await signatures[0].verified;
    return true;
  } catch {
    return false;
  }
}
