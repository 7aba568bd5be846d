import { useState } from 'react';
import { EVENTS, type Endpoint, type EndpointSettings, type Format } from '../../services/webhooks';
import { Form } from '../../components/Form';

/** Draft is an endpoint's settings as the form edits them. */
export type Draft = { url: string; format: Format; events: string[]; description: string; enabled: boolean; approvers: string };

export const blank: Draft = { url: '', format: 'json', events: [], description: '', enabled: true, approvers: '' };

export const draftOf = (e: Endpoint): Draft => ({
  url: e.url,
  format: e.format,
  events: e.events,
  description: e.description ?? '',
  enabled: e.enabled,
  approvers: e.slackApprovers.join(', '),
});

/**
 * settingsOf is the body of a create or a PATCH: every field, so what the
 * form shows is what is saved (an empty description clears it on a PATCH).
 */
export const settingsOf = (d: Draft, creating: boolean): EndpointSettings => ({
  url: d.url.trim(),
  format: d.format,
  events: EVENTS.map((e) => e.kind).filter((k) => d.events.includes(k)),
  ...(d.description.trim() || !creating ? { description: d.description.trim() } : {}),
  enabled: d.enabled,
  ...(d.format === 'slack' ? { slack_approvers: d.approvers.split(/[\s,]+/).filter(Boolean) } : {}),
});

/** EndpointForm edits an endpoint's settings, for a new endpoint or an existing one. */
export function EndpointForm({
  initial,
  creating,
  label,
  submit,
  onSubmit,
  onCancel,
}: {
  initial: Draft;
  creating: boolean;
  label: string;
  submit: string;
  onSubmit: (s: EndpointSettings) => Promise<boolean>;
  onCancel: () => void;
}) {
  const [d, setD] = useState<Draft>(initial);
  const [busy, setBusy] = useState(false);
  const valid = d.url.trim() !== '' && d.events.length > 0;
  return (
    <Form
      className="card mb-4 grid max-w-2xl gap-3 [&>label]:grid [&>label]:gap-1 [&>label>input]:w-full [&>label>select]:w-full"
      aria-label={label}
      onSubmit={async () => {
        if (!valid || busy) return;
        setBusy(true);
        if (await onSubmit(settingsOf(d, creating))) setD(initial);
        setBusy(false);
      }}
    >
      <label>
        URL{' '}
        <input
          type="url"
          required
          value={d.url}
          maxLength={2048}
          placeholder="https://example.com/hooks"
          onChange={(e) => setD({ ...d, url: e.target.value })}
        />
      </label>
      <label>
        Format{' '}
        <select value={d.format} onChange={(e) => setD({ ...d, format: e.target.value as Format })}>
          <option value="json">json (signed JSON envelope)</option>
          <option value="slack">slack (Slack incoming webhook)</option>
        </select>
      </label>
      <fieldset className="grid gap-1">
        <legend>Events</legend>
        {EVENTS.map((ev) => (
          <label key={ev.kind}>
            <input
              type="checkbox"
              checked={d.events.includes(ev.kind)}
              onChange={(e) => setD({ ...d, events: e.target.checked ? [...d.events, ev.kind] : d.events.filter((k) => k !== ev.kind) })}
            />{' '}
            <code>{ev.kind}</code> <span className="notice font-normal">{ev.what}</span>
          </label>
        ))}
      </fieldset>
      {d.format === 'slack' && (
        <label>
          Slack approvers{' '}
          <input
            value={d.approvers}
            placeholder="U024BE7LH, U0G9QF9C6 (empty: anyone in the channel)"
            onChange={(e) => setD({ ...d, approvers: e.target.value })}
          />
        </label>
      )}
      <label>
        Description <input value={d.description} maxLength={500} onChange={(e) => setD({ ...d, description: e.target.value })} />
      </label>
      <label className="!flex items-center gap-2">
        <input type="checkbox" checked={d.enabled} onChange={(e) => setD({ ...d, enabled: e.target.checked })} /> Enabled
      </label>
      <div className="buttons">
        <button type="submit" className="btn btn-primary" disabled={!valid || busy}>
          {submit}
        </button>
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
        {d.events.length === 0 && <span className="warn">Pick at least one event.</span>}
      </div>
    </Form>
  );
}
