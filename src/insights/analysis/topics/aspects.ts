import { type AspectModel, aspectLabel, isLexiconAspect, type MinedUnit } from "../aspect-mining.js";
import { discoverTopics, type PhraseEmbedder, type Topic, type TopicModel } from "./discover.js";

/**
 * The corpus's topics as the aspects its themes are built on: a statement counts toward the topic of
 * its most distinctive key phrase, and a theme is named after its topic's naming phrase, as written.
 */
export interface TopicAspects extends AspectModel {
  model: TopicModel;
  topic: (aspect: string) => Topic | undefined;
}

type TextUnit = MinedUnit & { text: string };

const display = (name: string) => (/^\p{Ll}/u.test(name) ? name.charAt(0).toUpperCase() + name.slice(1) : name);

/**
 * `reviews`: the corpus is reviews or posts rather than an issue tracker's reports, so the general aspects
 * enrichment names (pricing, support, battery) are read as candidate topics beside its own phrases.
 */
export function topicAspects(
  units: readonly TextUnit[],
  titles: ReadonlyMap<string, string>,
  entityNames: readonly string[],
  embed: PhraseEmbedder,
  reviews: boolean,
): TopicAspects {
  const general = reviews ? { named: (term: string) => (isLexiconAspect(term) ? aspectLabel(term) : null) } : null;
  const model = discoverTopics(units, titles.size, entityNames, embed, titles, general);
  const byKey = new Map(model.topics.map((t) => [t.key, t]));
  return {
    model,
    topic: (aspect) => byKey.get(aspect),
    aspectOf: (unit) => model.topicOf(unit as TextUnit)?.key ?? null,
    label: (aspect) => display(byKey.get(aspect)?.name ?? aspect),
    support: (aspect) => byKey.get(aspect)?.sources.size ?? 0,
    phrasesOf: (aspect) => byKey.get(aspect)?.phrases ?? [aspect],
    minSupport: model.minSupport,
  };
}
