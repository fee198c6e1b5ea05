/** @jsxImportSource hono/jsx */
/**
 * The signed-in user's two-factor authentication (`/app/settings/two-factor`): enrol an authenticator, confirm it
 * with a code (the recovery codes shown on that answer, once), turn it off with a code. Each calls the two-factor
 * service (src/two-factor/), which authorises as the user.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { beginEnrolment, confirmEnrolment, disableTwoFactor, twoFactorStatus } from "../../two-factor/two-factor.service";
import { callerOf, type Ctx } from "../context";
import { definePage } from "../define-page";
import { formOf, reasonsOf, text } from "../forms";
import { RecoveryCodesPage, TwoFactorPage } from "./two-factor.view";

export const twoFactorUi = new Hono<AppEnv>();

const PATH = "/app/settings/two-factor";

async function page(c: Ctx, refused?: ApiError): Promise<Response> {
  const caller = callerOf(c);
  const status = await twoFactorStatus(caller);
  return c.html(
    <TwoFactorPage principal={caller.principal} status={status} errors={refused ? reasonsOf(refused) : undefined} />,
    (refused?.status ?? 200) as 200,
  );
}

/** A refused code (422) or too many of them (429): the page again, with why. */
async function again(c: Ctx, run: () => Promise<unknown>): Promise<Response> {
  try {
    await run();
  } catch (e) {
    if (e instanceof ApiError && (e.status === 422 || e.status === 429)) return page(c, e);
    throw e;
  }
  return c.redirect(PATH, 303);
}

definePage(twoFactorUi, "get", "/settings/two-factor", "user", (c) => page(c));

definePage(twoFactorUi, "post", "/settings/two-factor/enrol", "user", (c) => again(c, () => beginEnrolment(callerOf(c))));

definePage(twoFactorUi, "post", "/settings/two-factor/confirm", "user", async (c) => {
  const form = await formOf(c);
  const caller = callerOf(c);
  try {
    const codes = await confirmEnrolment(caller, text(form, "code"));
    return c.html(<RecoveryCodesPage principal={caller.principal} codes={codes} />);
  } catch (e) {
    if (e instanceof ApiError && e.status === 422) return page(c, e);
    throw e;
  }
});

definePage(twoFactorUi, "post", "/settings/two-factor/disable", "user", async (c) => {
  const form = await formOf(c);
  return again(c, () => disableTwoFactor(callerOf(c), text(form, "code")));
});
