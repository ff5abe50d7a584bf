/** VADER's word list (Hutto & Gilbert 2014, Apache-2.0, shipped by `vader-sentiment`): word → valence in −4…4. */
declare module "vader-sentiment/src/vader_lexicon.js" {
  export const lexicon: Record<string, number>;
}
