import { oneOf } from '../../search';
import { EXPORT_STATES, type ExportState } from '../../services/exports';

/** ExportsSearch is the list's filter: one state, or all (pending first). */
export type ExportsSearch = { state?: ExportState };

export const exportsSearch = (s: Record<string, unknown>): ExportsSearch => ({ state: oneOf(s.state, EXPORT_STATES) });
