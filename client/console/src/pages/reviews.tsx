/**
 * Review queues: what waits for a person. Three queues as tabs (#/reviews/redemptions,
 * #/reviews/scans, #/reviews/handoffs), each a list whose rows open the item at
 * #/reviews/<queue>/<id>. Settling an item goes back to the list: the route changes, so the
 * shell's counts are read again.
 */
import './reviews.css';

import type { PageProps } from '../ui.tsx';
import { HandoffsQueue } from './reviews-handoffs.tsx';
import { RedemptionsQueue } from './reviews-redemptions.tsx';
import { ScansQueue } from './reviews-scans.tsx';

const QUEUES = [
  { path: 'redemptions', label: 'Redemptions to settle', count: 'redemptions' },
  { path: 'scans', label: 'Scans to validate', count: 'scans' },
  { path: 'handoffs', label: 'Support handoffs', count: 'handoffs' },
] as const;

export function ReviewsPage({ route, counts }: PageProps) {
  const queue = QUEUES.find((q) => q.path === route[0]) ?? QUEUES[0];
  const id = route[1];
  return (
    <>
      <h1>Review queues</h1>
      <nav class="queues" aria-label="Review queues">
        <ul>
          {QUEUES.map((q) => {
            const n = counts?.[q.count];
            return (
              <li key={q.path}>
                <a href={`#/reviews/${q.path}`} aria-current={q === queue ? 'page' : undefined}>
                  {q.label}
                  {n !== undefined ? (
                    <span class="badge">
                      {n}
                      {q.path === 'handoffs' ? ' open' : ''}
                    </span>
                  ) : null}
                </a>
              </li>
            );
          })}
        </ul>
      </nav>
      {queue.path === 'redemptions' ? (
        <RedemptionsQueue id={id} />
      ) : queue.path === 'scans' ? (
        <ScansQueue id={id} />
      ) : (
        <HandoffsQueue id={id} />
      )}
    </>
  );
}
