import { createFileRoute } from '@tanstack/react-router';
import { ApprovalPage } from '../../pages/approvals/ApprovalPage';
import { Home } from '../../pages/overview/Home';
import { approvalQuery } from '../../services/approvals';
import { warm } from '../../services/queryClient';
import { useSession } from '../../session';
import { approvalParams } from './$id.schema';

/** An approval: what is asked, what approving does now, and the decision. */
export const Route = createFileRoute('/approvals/$id')({
  codeSplitGroupings: [],
  params: approvalParams,
  beforeLoad: ({ params: { id } }) => ({ approval: id ? approvalQuery(id) : null }),
  loader: ({ context: { queryClient, approval } }) => {
    if (approval) warm(queryClient.ensureQueryData(approval));
  },
  component: Approval,
});

function Approval() {
  const { id } = Route.useParams();
  const session = useSession();
  return id ? <ApprovalPage key={id} id={id} session={session} /> : <Home />;
}
