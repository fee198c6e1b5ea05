/** Notification configurations of a workspace (HCP Terraform API docs: Notification Configurations). */
import type { Context } from "hono";
import { callerOf } from "../auth/caller.http";
import { defineRoutes } from "../jsonapi/define-route";
import { jsonapi, noContent, paginated, pageSlice } from "../jsonapi/document";
import { listDocument, pageOf, pageQuery, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { workspaceIdParam } from "../workspaces/workspaces.schemas";
import { notificationCreateBody, notificationParam, notificationResource, notificationUpdateBody } from "./notifications.schemas";
import { serializeNotification } from "./notifications.serialize";
import * as service from "./notifications.service";

const defineRoute = defineRoutes({ tags: ["Notification configurations"] });
export const notifications = router();
const notificationResponse = ok("The notification configuration", resourceDocument(notificationResource));

const one = (c: Context, v: service.NotificationView, status: 200 | 201 = 200) => jsonapi(c, { data: serializeNotification(v.config, v.workspaceId) }, status);

notifications.openapi(
  defineRoute({
    method: "post",
    path: "/workspaces/{workspace_id}/notification-configurations",
    action: "workspace.update",
    summary: "Create a notification configuration (workspace admin); an enabled one is verified first",
    request: { params: workspaceIdParam, body: jsonBody(notificationCreateBody) },
    responses: ok("The notification configuration", resourceDocument(notificationResource), 201),
  }),
  async (c) => {
    const v = await service.createNotification(callerOf(c), c.req.valid("param").workspace_id, c.req.valid("json").data, new URL(c.req.url).origin);
    return one(c, v, 201);
  },
);

notifications.openapi(
  defineRoute({
    method: "get",
    path: "/workspaces/{workspace_id}/notification-configurations",
    action: "workspace.update",
    summary: "List a workspace's notification configurations (workspace admin); paginated when a page is asked for",
    request: { params: workspaceIdParam, query: pageQuery },
    responses: ok("The notification configurations", listDocument(notificationResource)),
  }),
  async (c) => {
    const views = await service.listNotifications(callerOf(c), c.req.valid("param").workspace_id);
    const q = c.req.valid("query");
    const data = (items: service.NotificationView[]) => items.map((v) => serializeNotification(v.config, v.workspaceId));
    // As the real API: without page parameters, the whole list and no pagination.
    if (q["page[number]"] === undefined && q["page[size]"] === undefined) return jsonapi(c, { data: data(views) });
    const page = pageOf(q);
    return jsonapi(c, paginated(c, data(pageSlice(views, page)), page, views.length));
  },
);

notifications.openapi(
  defineRoute({
    method: "get",
    path: "/notification-configurations/{notification_configuration_id}",
    action: "workspace.update",
    summary: "Show a notification configuration (workspace admin)",
    request: { params: notificationParam },
    responses: notificationResponse,
  }),
  async (c) => one(c, await service.showNotification(callerOf(c), c.req.valid("param").notification_configuration_id)),
);

notifications.openapi(
  defineRoute({
    method: "patch",
    path: "/notification-configurations/{notification_configuration_id}",
    action: "workspace.update",
    summary: "Update a notification configuration (workspace admin); enabling it, or changing where it goes, verifies it first",
    request: { params: notificationParam, body: jsonBody(notificationUpdateBody) },
    responses: notificationResponse,
  }),
  async (c) => one(c, await service.updateNotification(callerOf(c), c.req.valid("param").notification_configuration_id, c.req.valid("json").data)),
);

notifications.openapi(
  defineRoute({
    method: "post",
    path: "/notification-configurations/{notification_configuration_id}/actions/verify",
    action: "workspace.update",
    summary: "Send a verification now and record its answer in delivery-responses",
    request: { params: notificationParam },
    responses: notificationResponse,
  }),
  async (c) => one(c, await service.verifyNotification(callerOf(c), c.req.valid("param").notification_configuration_id)),
);

notifications.openapi(
  defineRoute({
    method: "delete",
    path: "/notification-configurations/{notification_configuration_id}",
    action: "workspace.update",
    summary: "Delete a notification configuration (workspace admin); its pending deliveries are dropped",
    request: { params: notificationParam },
    responses: noContentResponse,
  }),
  async (c) => {
    await service.deleteNotification(callerOf(c), c.req.valid("param").notification_configuration_id);
    return noContent(c);
  },
);
