import { getRouteApi } from '@tanstack/react-router';
import { type DeliveryStatus, type Format, STATUSES } from '../../services/webhooks';
import { Deliveries } from './Deliveries';

const route = getRouteApi('/webhooks/$id');

/** DeliveryLog is the endpoint's deliveries, newest first, filtered by status. */
export function DeliveryLog({
  endpointID,
  format,
  owner,
  onReplayed,
  onError,
}: {
  endpointID: string;
  format: Format;
  owner: boolean;
  onReplayed: (text: string) => void;
  onError: (text: string) => void;
}) {
  // The filter is in the URL (?status=failed): a link opens the failed deliveries.
  const status: DeliveryStatus | '' = route.useSearch().status ?? '';
  const navigate = route.useNavigate();
  const setStatus = (s: DeliveryStatus | '') => navigate({ search: s ? { status: s } : {} });
  return (
    <section aria-label="Delivery log">
      <h2>Delivery log</h2>
      <div className="filters">
        <label>
          Status{' '}
          <select value={status} onChange={(e) => setStatus(e.target.value as DeliveryStatus | '')}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
      </div>
      {/* Keyed by the filter: a new filter starts from its own first page. */}
      <Deliveries key={status} endpointID={endpointID} format={format} status={status} owner={owner} onReplayed={onReplayed} onError={onError} />
    </section>
  );
}
