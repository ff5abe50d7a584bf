import { createRequire } from "node:module";
import type winkNLPType from "wink-nlp";

/** wink-nlp's English model as the engine loads it, with what of it the engine reads beyond wink-nlp's typings. */
export type WinkModel = Parameters<typeof winkNLPType>[0] & {
  metaCER(): unknown;
  core(): { features: { lexeme: { list: unknown[] } } };
};

let model: WinkModel | undefined;

/**
 * The English model (wink-eng-lite-web-model), safe to load into more than one wink-nlp instance: its
 * `metaCER()` re-serialises its own module state at every call (the result of the call before, stringified
 * again), so the string doubles its escapes at each load until a few loads later it passes V8's longest
 * string. Every instance made from this gets the first call's result.
 */
export function englishModel(): WinkModel {
  if (!model) {
    const raw = createRequire(import.meta.url)("wink-eng-lite-web-model") as WinkModel;
    const metaCER = raw.metaCER();
    model = { ...raw, metaCER: () => metaCER };
  }
  return model;
}

/** A wink-nlp instance over the English model with the given pipes. */
export function winkInstance(pipes: Parameters<typeof winkNLPType>[1]): ReturnType<typeof winkNLPType> {
  const winkNLP = createRequire(import.meta.url)("wink-nlp") as typeof winkNLPType;
  return winkNLP(englishModel(), pipes);
}
