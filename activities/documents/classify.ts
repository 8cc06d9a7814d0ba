/**
 * Rule-based document classification (pure): keyword evidence per category, the best category
 * with a confidence from how much evidence it has and how far it leads the runner-up.
 */
interface FolderStructure {
  folder_name: string;
  category: string;
  subcategory: string;
}

export interface Classification {
  folder_structure: FolderStructure;
  confidence: number;
  engine: string;
  evidence: string[];
}

interface Rule {
  category: string;
  folder: string;
  keywords: string[];
  subcategories: Array<[string, string[]]>;
}

const RULES: Rule[] = [
  {
    category: 'invoices',
    folder: 'Invoices',
    keywords: [
      'invoice',
      'invoice number',
      'bill to',
      'amount due',
      'due date',
      'vat',
      'tax id',
      'remit',
      'payment terms',
      'subtotal',
    ],
    subcategories: [
      ['utilities', ['electricity', 'water', 'gas', 'internet', 'phone', 'kwh']],
      ['services', ['consulting', 'hours', 'service']],
    ],
  },
  {
    category: 'receipts',
    folder: 'Receipts',
    keywords: [
      'receipt',
      'cash',
      'change',
      'thank you for shopping',
      'subtotal',
      'total',
      'visa',
      'card ending',
      'store',
    ],
    subcategories: [
      ['groceries', ['milk', 'bread', 'bananas', 'grocery', 'market']],
      ['restaurants', ['table', 'tip', 'server', 'restaurant']],
    ],
  },
  {
    category: 'contracts',
    folder: 'Contracts',
    keywords: [
      'agreement',
      'contract',
      'parties',
      'party',
      'hereby',
      'terms and conditions',
      'signature',
      'effective date',
      'termination',
      'obligations',
      'governing law',
    ],
    subcategories: [
      ['employment', ['employee', 'employer', 'salary']],
      ['rental', ['landlord', 'tenant', 'lease', 'rent']],
    ],
  },
  {
    category: 'identity_documents',
    folder: 'Identity documents',
    keywords: [
      'passport',
      'driver license',
      "driver's license",
      'date of birth',
      'nationality',
      'identity card',
      'id number',
      'place of birth',
      'expiry date',
    ],
    subcategories: [
      ['passport', ['passport']],
      ['driving_license', ['driver', 'driving']],
    ],
  },
  {
    category: 'bank_statements',
    folder: 'Bank statements',
    keywords: [
      'statement',
      'account number',
      'iban',
      'opening balance',
      'closing balance',
      'transactions',
      'bank',
      'deposit',
      'withdrawal',
      'sort code',
    ],
    subcategories: [
      ['credit_card', ['credit card', 'minimum payment']],
      ['checking', ['checking', 'current account']],
    ],
  },
  {
    category: 'medical',
    folder: 'Medical',
    keywords: [
      'patient',
      'diagnosis',
      'prescription',
      'doctor',
      'hospital',
      'clinic',
      'medication',
      'dosage',
      'symptoms',
      'laboratory',
    ],
    subcategories: [
      ['prescriptions', ['prescription', 'dosage', 'mg']],
      ['lab_results', ['laboratory', 'results', 'blood']],
    ],
  },
  {
    category: 'tickets',
    folder: 'Tickets',
    keywords: [
      'ticket',
      'boarding pass',
      'flight',
      'seat',
      'gate',
      'admit one',
      'departure',
      'arrival',
      'passenger',
      'platform',
      'booking reference',
    ],
    subcategories: [
      ['travel', ['flight', 'boarding', 'train', 'bus', 'departure']],
      ['events', ['concert', 'admit', 'event', 'show']],
    ],
  },
  {
    category: 'letters',
    folder: 'Letters',
    keywords: [
      'dear',
      'sincerely',
      'regards',
      'yours faithfully',
      'yours truly',
      'to whom it may concern',
      'best wishes',
    ],
    subcategories: [
      ['formal', ['sincerely', 'faithfully', 'to whom it may concern']],
      ['personal', ['love', 'best wishes']],
    ],
  },
];

const count = (text: string, phrase: string) => {
  const re = new RegExp(`\\b${phrase.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s+')}\\b`, 'gi');
  return (text.match(re) ?? []).length;
};

/** `isImage`: a picture (photo, scan) — with little text it is filed under photos. */
export function classify(text: string, isImage: boolean): Classification {
  const words = text.split(/\s+/).filter(Boolean).length;
  if (isImage && words < 8) {
    return {
      folder_structure: { folder_name: 'Photos', category: 'photos', subcategory: 'images' },
      confidence: words === 0 ? 0.9 : 0.7,
      engine: 'rules',
      evidence: [`${words} word(s) of text`],
    };
  }
  const scored = RULES.map((r) => {
    const found = r.keywords.filter((k) => count(text, k) > 0);
    return { r, found, score: found.length + Math.min(3, r.keywords.reduce((s, k) => s + count(text, k), 0) / 5) };
  }).sort((a, b) => b.score - a.score);
  const [best, second] = scored;
  if (!best || best.found.length < 2) {
    return {
      folder_structure: { folder_name: 'Other', category: 'other', subcategory: 'general' },
      confidence: 0.5,
      engine: 'rules',
      evidence: best?.found ?? [],
    };
  }
  const lead = best.score - (second?.score ?? 0);
  const confidence = Math.min(0.98, 0.45 + 0.08 * best.found.length + 0.06 * lead);
  const sub = best.r.subcategories.find(([, ks]) => ks.some((k) => count(text, k) > 0))?.[0] ?? 'general';
  return {
    folder_structure: { folder_name: best.r.folder, category: best.r.category, subcategory: sub },
    confidence: Math.round(confidence * 100) / 100,
    engine: 'rules',
    evidence: best.found,
  };
}

export const CATEGORIES = [...RULES.map((r) => r.category), 'photos', 'other'];
export const folderOf = (category: string) =>
  RULES.find((r) => r.category === category)?.folder ?? (category === 'photos' ? 'Photos' : 'Other');
