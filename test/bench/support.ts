/**
 * Support part of `npm run bench`: answer latency with 1,000 knowledge articles, and the
 * transcription real-time factor of the offline speech engine on synthesized questions.
 */
import { speak } from '../helpers/speech.ts';

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

const TOPICS = [
  'order',
  'account',
  'points',
  'gift',
  'delivery',
  'payment',
  'receipt',
  'referral',
  'store',
  'coupon',
  'subscription',
  'notification',
  'privacy',
  'language',
  'device',
];
const VERBS = ['change', 'update', 'check', 'find', 'share', 'link', 'verify', 'download', 'review', 'transfer'];
const NOUNS = [
  'settings',
  'history',
  'balance',
  'address',
  'profile',
  'card',
  'code',
  'limit',
  'status',
  'report',
  'badge',
  'level',
  'tier',
  'region',
  'voucher',
];

export async function benchSupport(base: string, adminKey: string): Promise<string[]> {
  const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
  const post = async (p: string, body: unknown) => {
    const res = await fetch(`${base}${p}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${p}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  const ARTICLES = Number(process.env.BENCH_ARTICLES ?? 1000);
  let seed = 7;
  const rnd = (n: number) => ((seed = (seed * 48271) % 2_147_483_647), seed % n);
  const real = [
    {
      title: 'Refund policy',
      body: 'You can request a refund within 30 days of purchase. Refunds reach your card in 5 to 10 business days.',
    },
    {
      title: 'Resetting your password',
      body: 'If you forgot your password, tap Forgot password on the sign-in screen.',
    },
    { title: 'How loyalty points expire', body: 'Points expire 12 months after they are earned.' },
  ];
  const t0 = performance.now();
  for (let i = 0; i < ARTICLES; i += 1) {
    const a =
      i < real.length
        ? real[i]
        : (() => {
            const topic = TOPICS[rnd(TOPICS.length)];
            const sentences = Array.from(
              { length: 4 + rnd(5) },
              () =>
                `To ${VERBS[rnd(VERBS.length)]} your ${topic} ${NOUNS[rnd(NOUNS.length)]}, open the ${NOUNS[rnd(NOUNS.length)]} page and choose ${VERBS[rnd(VERBS.length)]}.`,
            );
            return {
              title: `${VERBS[rnd(VERBS.length)]} ${topic} ${NOUNS[rnd(NOUNS.length)]} (${i})`,
              body: sentences.join(' '),
            };
          })();
    await post('/support/knowledge', a);
  }
  const loadS = (performance.now() - t0) / 1000;
  const conversation_id = (await post('/initialize_session', { user_id: 'bench-support' })).conversation_id;
  const questions = [
    'How can I get my money back?',
    'I forgot my passcode',
    'When do my rewards lapse?',
    'How do I update my delivery address?',
    'What is the weather tomorrow?',
  ];
  const times: number[] = [];
  for (let i = 0; i < 200; i += 1) {
    const t = performance.now();
    await post('/support', { prompt: questions[i % questions.length], user_id: 'bench-support', conversation_id });
    if (i >= 10) times.push(performance.now() - t);
  }
  const lines = [
    `Support answers with ${ARTICLES} knowledge articles (loaded in ${loadS.toFixed(0)} s through the API), ${times.length} sequential questions: p50 ${pct(times, 50).toFixed(1)} ms, p99 ${pct(times, 99).toFixed(1)} ms`,
  ];

  const sentences = [
    'i forgot my password and cannot sign in',
    'please tell me how i can get a refund for my order',
    'when do my reward points expire',
    'how long does delivery take',
  ];
  let audioS = 0;
  let engineMs = 0;
  const wall: number[] = [];
  for (let i = 0; i < sentences.length * 2 + 1; i += 1) {
    const form = new FormData();
    form.append('file', new Blob([speak(sentences[i % sentences.length])], { type: 'audio/wav' }), 'q.wav');
    form.append('user_id', 'bench-support');
    form.append('conversation_id', conversation_id);
    const t = performance.now();
    const res = await fetch(`${base}/support/transcribe`, {
      method: 'POST',
      headers: { authorization: headers.authorization },
      body: form,
    });
    const out = (await res.json()) as any;
    if (res.status !== 200) throw new Error(`transcribe: ${res.status} ${JSON.stringify(out)}`);
    if (i === 0) continue; // warm-up: the recognizer loads its model once per worker
    wall.push(performance.now() - t);
    audioS += out.duration;
    engineMs += out.metadata.transcription_ms;
  }
  lines.push(
    `Transcription (pocketsphinx en-us, ${wall.length} synthesized questions, ${audioS.toFixed(1)} s of audio): real-time factor ${(engineMs / 1000 / audioS).toFixed(2)} (recognition time / audio length); whole request p50 ${pct(wall, 50).toFixed(0)} ms, p99 ${pct(wall, 99).toFixed(0)} ms`,
  );
  return lines;
}
