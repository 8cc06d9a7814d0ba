import type { PageProps } from '../ui.tsx';

export function ReviewsPage(_props: PageProps) {
  return <h1>reviews</h1>;
}
