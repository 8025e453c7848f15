import type { Tenant } from '../../db/tenant/tenant.ts'
import { defineRoute, upsertReply } from '../../platform/route.ts'
import {
  OccurrencesQuery,
  OccurrencesResponse,
  ScheduleCreate,
  ScheduleListQuery,
  ScheduleListResponse,
  ScheduleParams,
  ScheduleResponse,
  ScheduleUpdate,
  ScheduleUpsert,
  ScheduleUpsertResponse,
  SkipBody,
  SkipResponse,
  UpcomingQuery,
  UpcomingResponse,
} from './model.ts'
import { toSchedule } from './queries.ts'
import {
  createSchedule,
  deleteSchedule,
  getSchedule,
  listSchedules,
  scheduleOccurrencesIn,
  skipOccurrence,
  updateSchedule,
  upcomingOccurrences,
  upsertSchedule,
} from './service.ts'

/** Scheduled (recurring) transactions (CONTRACT §29), under their own scopes. */
const tag = 'Schedules'
/** If-Match on PATCH and DELETE is checked against the schedule as it is now (CONTRACT §25). */
const current = ({ tenant, params }: { tenant: Tenant; params: { scheduleId: string } }) => toSchedule(getSchedule(tenant, params.scheduleId))
const WRITE_ERRORS = ['invalid_reference', 'rule_violation'] as const

const example = {
  name: 'Rent',
  accountId: 'acct_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b',
  amount: 1200,
  payeeName: 'Landlord',
  recurrence: { freq: 'monthly', byMonthDay: [1], start: '2026-01-01', weekendAdjust: 'after' },
  autoPost: true,
}

export const scheduleRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/schedules',
    operationId: 'listSchedules',
    summary: 'List schedules (oldest first)',
    tag,
    scopes: ['schedules:read'],
    query: ScheduleListQuery,
    response: ScheduleListResponse,
    statuses: [200],
    errors: ['validation_failed'],
    handle: ({ tenant, query }) => ({ status: 200, body: listSchedules(tenant, query) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/schedules/upcoming',
    operationId: 'listUpcomingOccurrences',
    summary: 'Every active schedule’s occurrences from today for `days` days, by date',
    description: 'For an “upcoming bills” screen: each occurrence with its status (`expected`, `posted`, `skipped`) and the transaction that counts for it.',
    tag,
    scopes: ['schedules:read'],
    query: UpcomingQuery,
    response: UpcomingResponse,
    statuses: [200],
    errors: ['validation_failed'],
    handle: ({ tenant, query }) => ({ status: 200, body: upcomingOccurrences(tenant, query.days ?? 30) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/schedules',
    operationId: 'createSchedule',
    summary: 'Create a schedule',
    description:
      'A transaction expected again and again: `recurrence` says when (daily, weekly, monthly or yearly, every `interval`, from `start`). ' +
      'With `autoPost: true` pfin records each occurrence’s transaction on its date, from today on.',
    tag,
    scopes: ['schedules:write'],
    body: ScheduleCreate,
    response: ScheduleResponse,
    statuses: [201],
    errors: [...WRITE_ERRORS, 'external_id_conflict', 'limit_reached'],
    requestExample: example,
    etag: true,
    handle: ({ tenant, auth, body }) => {
      const row = createSchedule(tenant, auth.subject.country, body)
      return { status: 201, body: { data: toSchedule(row) }, location: `/v1/schedules/${row.id}` }
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/schedules/upsert',
    operationId: 'upsertSchedule',
    summary: 'Create or update a schedule by externalId (sync)',
    tag,
    scopes: ['schedules:write'],
    body: ScheduleUpsert,
    response: ScheduleUpsertResponse,
    statuses: [201, 200],
    errors: [...WRITE_ERRORS, 'limit_reached'],
    requestExample: { externalId: 'rent', ...example },
    etag: true,
    handle: ({ tenant, auth, body }) => {
      const { created, row } = upsertSchedule(tenant, auth.subject.country, body)
      return upsertReply(created, toSchedule(row), `/v1/schedules/${row.id}`)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/schedules/:scheduleId',
    operationId: 'getSchedule',
    summary: 'Get a schedule',
    tag,
    scopes: ['schedules:read'],
    params: ScheduleParams,
    response: ScheduleResponse,
    statuses: [200],
    errors: ['not_found'],
    etag: true,
    handle: ({ tenant, params }) => ({ status: 200, body: { data: toSchedule(getSchedule(tenant, params.scheduleId)) } }),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/v1/schedules/:scheduleId',
    operationId: 'updateSchedule',
    summary: 'Change a schedule',
    description:
      'Fields not sent keep their values; `recurrence` replaces the whole rule. What was posted stays as it is: a new rule applies from now on, and auto-posting never goes back over dates it has passed.',
    tag,
    scopes: ['schedules:write'],
    params: ScheduleParams,
    body: ScheduleUpdate,
    response: ScheduleResponse,
    statuses: [200],
    errors: ['not_found', ...WRITE_ERRORS, 'external_id_conflict'],
    requestExample: { amount: 1250 },
    current,
    handle: ({ tenant, auth, params, body }) => ({
      status: 200,
      body: { data: toSchedule(updateSchedule(tenant, auth.subject.country, params.scheduleId, body)) },
    }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/schedules/:scheduleId',
    operationId: 'deleteSchedule',
    summary: 'Delete a schedule permanently',
    description: 'Returns the schedule as it was. The transactions it posted stay, with their `scheduleId`.',
    tag,
    scopes: ['schedules:write'],
    params: ScheduleParams,
    response: ScheduleResponse,
    statuses: [200],
    errors: ['not_found'],
    current,
    handle: ({ tenant, params }) => ({ status: 200, body: { data: toSchedule(deleteSchedule(tenant, params.scheduleId)) } }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/schedules/:scheduleId/occurrences',
    operationId: 'listScheduleOccurrences',
    summary: 'A schedule’s occurrences in a date range, with their status',
    description: `\`from\` (default today) to \`to\` (default 90 days later), inclusive, at most ${4000} days apart.`,
    tag,
    scopes: ['schedules:read'],
    params: ScheduleParams,
    query: OccurrencesQuery,
    response: OccurrencesResponse,
    statuses: [200],
    errors: ['not_found', 'validation_failed'],
    handle: ({ tenant, params, query }) => ({
      status: 200,
      body: { data: scheduleOccurrencesIn(tenant, params.scheduleId, query), scheduleId: params.scheduleId },
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/schedules/:scheduleId/skip',
    operationId: 'skipScheduleOccurrence',
    summary: 'Skip one occurrence',
    description:
      'The date must be one of the schedule’s occurrences (after weekend adjustment) that auto-posting has not posted. Skipping it again changes nothing.',
    tag,
    scopes: ['schedules:write'],
    params: ScheduleParams,
    body: SkipBody,
    response: SkipResponse,
    statuses: [200],
    errors: ['not_found', 'rule_violation'],
    requestExample: { date: '2026-03-01' },
    handle: ({ tenant, params, body }) => ({ status: 200, body: { data: skipOccurrence(tenant, params.scheduleId, body.date) } }),
  }),
]
