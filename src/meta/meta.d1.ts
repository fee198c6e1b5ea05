/** D1 reads behind the meta routes (the account of a user token). */
import type { Db } from "../caller";

export interface AccountRow {
  id: string;
  username: string;
  email: string | null;
  is_site_admin: number;
  unconfirmed_email: string | null;
}

export async function findAccount(db: Db, userId: string): Promise<AccountRow | null> {
  return db.prepare("SELECT * FROM users WHERE id = ?").bind(userId).first<AccountRow>();
}
