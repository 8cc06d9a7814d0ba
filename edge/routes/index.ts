/**
 * Every route module, imported for its side effect: each registers its routes on import, in this
 * order, which is the OpenAPI document's (the metrics route first).
 */
import '../metrics.ts';
import './system.ts';
import './docs.ts';
import './console.ts';
import './retail.ts';
import './ticket-scan.ts';
import './support.ts';
import './feedback.ts';
import './search.ts';
import './documents.ts';
import './billing.ts';
import './llm-config.ts';
import './session.ts';
import './identity.ts';
import './images.ts';
import './files.ts';
import './loyalty.ts';
import './loyalty-tiers.ts';
import './loyalty-campaigns.ts';
import './referrals.ts';
import './gifts.ts';
import './gift-provider.ts';
import './responses.ts';
import './text.ts';
import './email.ts';
import './scheduler.ts';
import './webhooks.ts';
import './privacy.ts';
import './audit.ts';
