/**
 * File type detection from content (magic numbers), never from the file name or the client's
 * Content-Type. Covers what the image and document pipelines accept and the common things they
 * must refuse by name.
 */
export interface Sniffed {
  mime: string;
  /** short format name: jpeg, png, heic, webp, … */
  format: string;
}

const ascii = (b: Uint8Array, start: number, end: number) => String.fromCharCode(...b.subarray(start, end));

const HEIF_BRANDS: Record<string, Sniffed> = {
  heic: { mime: 'image/heic', format: 'heic' },
  heix: { mime: 'image/heic', format: 'heic' },
  heim: { mime: 'image/heic', format: 'heic' },
  heis: { mime: 'image/heic', format: 'heic' },
  hevc: { mime: 'image/heic-sequence', format: 'heic' },
  hevx: { mime: 'image/heic-sequence', format: 'heic' },
  mif1: { mime: 'image/heif', format: 'heif' },
  msf1: { mime: 'image/heif-sequence', format: 'heif' },
  avif: { mime: 'image/avif', format: 'avif' },
  avis: { mime: 'image/avif', format: 'avif' },
};

export function sniff(buf: Uint8Array): Sniffed {
  if (buf.length >= 3 && buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff)
    return { mime: 'image/jpeg', format: 'jpeg' };
  if (buf.length >= 8 && ascii(buf, 1, 4) === 'PNG' && buf[0] === 0x89) return { mime: 'image/png', format: 'png' };
  if (buf.length >= 6 && (ascii(buf, 0, 6) === 'GIF87a' || ascii(buf, 0, 6) === 'GIF89a'))
    return { mime: 'image/gif', format: 'gif' };
  if (buf.length >= 12 && ascii(buf, 0, 4) === 'RIFF' && ascii(buf, 8, 12) === 'WEBP')
    return { mime: 'image/webp', format: 'webp' };
  if (buf.length >= 12 && ascii(buf, 0, 4) === 'RIFF' && ascii(buf, 8, 12) === 'WAVE')
    return { mime: 'audio/wav', format: 'wav' };
  if (
    buf.length >= 4 &&
    ((buf[0] === 0x49 && buf[1] === 0x49 && buf[2] === 0x2a && buf[3] === 0) ||
      (buf[0] === 0x4d && buf[1] === 0x4d && buf[2] === 0 && buf[3] === 0x2a))
  )
    return { mime: 'image/tiff', format: 'tiff' };
  if (buf.length >= 2 && ascii(buf, 0, 2) === 'BM') return { mime: 'image/bmp', format: 'bmp' };
  if (buf.length >= 12 && ascii(buf, 4, 8) === 'ftyp') {
    const major = ascii(buf, 8, 12);
    if (HEIF_BRANDS[major]) {
      // mif1 files whose compatible brands name heic are HEVC stills (what iPhones write).
      if (major === 'mif1' || major === 'msf1') {
        const boxSize = (buf[0] << 24) | (buf[1] << 16) | (buf[2] << 8) | buf[3];
        const brands = ascii(buf, 16, Math.min(boxSize, buf.length, 64));
        if (brands.includes('heic') || brands.includes('heix')) return { mime: 'image/heic', format: 'heic' };
        if (brands.includes('avif')) return HEIF_BRANDS.avif;
      }
      return HEIF_BRANDS[major];
    }
    if (['M4A ', 'M4B '].includes(major)) return { mime: 'audio/mp4', format: 'm4a' };
    if (major.startsWith('qt') || major.startsWith('mp4') || major.startsWith('iso'))
      return { mime: 'video/mp4', format: 'mp4' };
  }
  if (buf.length >= 5 && ascii(buf, 0, 5) === '%PDF-') return { mime: 'application/pdf', format: 'pdf' };
  if (buf.length >= 4 && buf[0] === 0x50 && buf[1] === 0x4b && buf[2] === 3 && buf[3] === 4)
    return { mime: 'application/zip', format: 'zip' };
  if (buf.length >= 4 && ascii(buf, 0, 4) === 'OggS') return { mime: 'audio/ogg', format: 'ogg' };
  if (buf.length >= 10 && ascii(buf, 0, 3) === 'ID3') return afterId3(buf);
  if (buf.length >= 4 && buf[0] === 0x1a && buf[1] === 0x45 && buf[2] === 0xdf && buf[3] === 0xa3)
    return { mime: 'video/webm', format: 'webm' };
  if (buf.length >= 4 && ascii(buf, 0, 4) === 'fLaC') return { mime: 'audio/flac', format: 'flac' };
  // MPEG audio frame (an MP3 without ID3 tag) and ADTS AAC: 11 sync bits, then layer / profile bits.
  if (buf.length >= 2 && buf[0] === 0xff && (buf[1] & 0xf6) === 0xf0) return { mime: 'audio/aac', format: 'aac' };
  if (buf.length >= 2 && buf[0] === 0xff && (buf[1] & 0xe0) === 0xe0 && (buf[1] & 0x06) !== 0)
    return { mime: 'audio/mpeg', format: 'mp3' };
  if (buf.length >= 5 && (ascii(buf, 0, 5) === '<?xml' || ascii(buf, 0, 4) === '<svg'))
    return { mime: 'image/svg+xml', format: 'svg' };
  return looksLikeText(buf)
    ? { mime: 'text/plain', format: 'text' }
    : { mime: 'application/octet-stream', format: 'binary' };
}

/**
 * An ID3v2 tag says nothing about what follows it, and decoders look past it: what comes after
 * the tag decides (AAC and FLAC streams carry ID3 tags too). MPEG audio frames, or anything the
 * mp3 demuxer will refuse, stay mp3.
 */
function afterId3(buf: Uint8Array): Sniffed {
  const size = ((buf[6] & 0x7f) << 21) | ((buf[7] & 0x7f) << 14) | ((buf[8] & 0x7f) << 7) | (buf[9] & 0x7f);
  const start = 10 + size + (buf[5] & 0x10 ? 10 : 0);
  const rest = buf.subarray(start);
  if (rest.length >= 4 && ascii(rest, 0, 4) === 'fLaC') return { mime: 'audio/flac', format: 'flac' };
  if (rest.length >= 2 && rest[0] === 0xff && (rest[1] & 0xf6) === 0xf0) return { mime: 'audio/aac', format: 'aac' };
  return { mime: 'audio/mpeg', format: 'mp3' };
}

function looksLikeText(buf: Uint8Array): boolean {
  const sample = buf.subarray(0, 4096);
  if (!sample.length) return false;
  let control = 0;
  for (const byte of sample) {
    if (byte === 0) return false;
    if (byte < 9 || (byte > 13 && byte < 32)) control += 1;
  }
  return control / sample.length < 0.01;
}

/**
 * What the speech pipeline accepts, each with the ffmpeg demuxer that must read it: ffmpeg is
 * never left to guess, since its own probing would follow the content past what was sniffed
 * (an ID3 tag in front of an HLS playlist or a concat script opens other files).
 */
export const AUDIO_DEMUXERS: Record<string, string> = {
  wav: 'wav',
  mp3: 'mp3',
  aac: 'aac',
  m4a: 'mov',
  mp4: 'mov',
  ogg: 'ogg',
  webm: 'webm',
  flac: 'flac',
};
export const RASTER_IMAGE_FORMATS = new Set(['jpeg', 'png', 'gif', 'webp', 'tiff', 'heic', 'heif', 'avif']);
