import type { HomeSection } from '../lifecycles/lifecycle.ts';
import type { TimeOffReadModel } from './readModel.projection.ts';

// CONTRACT STUB (slice slack): replaced by the App Home section (pending approvals, upcoming time off).
export const createTimeOffHomeSection = (_deps: Readonly<{ readModel: TimeOffReadModel }>): HomeSection => ({
  async render() {
    return [];
  },
});
