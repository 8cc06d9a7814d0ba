/**
 * The gateway as the local engines see it: an OCR or speech engine takes a model object and never
 * imports the gateway, so the caller's organization settings and metering stay here.
 */
import type { VisionModel } from '../adapters/ocr.ts';
import type { SpeechModel } from '../adapters/speech.ts';
import { type Caller, gatewayTranscribe, gatewayVision, usesModel } from './gateway.ts';

/** The caller's ticket_scan model (null answers when the organization configures none). */
export const visionModel = (who: Caller): VisionModel => ({
  read: (image, instructions) => gatewayVision(who, image, instructions),
});

/** The caller's transcription route: its model, or `model: null` for the local engine. */
export async function speechRoute(who: Caller): Promise<{ model: SpeechModel | null }> {
  if (!(await usesModel(who.organization_id, 'transcription'))) return { model: null };
  return { model: { transcribe: (audio, filename) => gatewayTranscribe(who, audio, filename) } };
}
