import type { PageProps } from '../ui.tsx';

export function CampaignsPage(_props: PageProps) {
  return <h1>campaigns</h1>;
}
