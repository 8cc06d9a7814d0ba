"""Offline English speech recognition with PocketSphinx (its bundled en-us model).

A long-lived helper of activities/adapters/speech.ts: the model loads once. Protocol on
stdin/stdout: a 4-byte big-endian length, then that many bytes of 16 kHz mono signed 16-bit
little-endian PCM; the answer is one JSON line {"text": ..., "ms": ...} or {"error": ...}.
"""
import json
import struct
import sys
import time

from pocketsphinx import Decoder

decoder = Decoder(samprate=16000, loglevel="FATAL")
sys.stdout.write(json.dumps({"ready": True}) + "\n")
sys.stdout.flush()
stdin = sys.stdin.buffer
while True:
    head = stdin.read(4)
    if len(head) < 4:
        break
    (size,) = struct.unpack(">I", head)
    pcm = stdin.read(size)
    started = time.time()
    try:
        decoder.start_utt()
        if pcm:
            decoder.process_raw(pcm, full_utt=True)
        decoder.end_utt()
        hyp = decoder.hyp()
        answer = {"text": hyp.hypstr if hyp else "", "ms": round((time.time() - started) * 1000)}
    except Exception as err:  # the caller gets the reason; the helper stays up
        answer = {"error": str(err)}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
