/** The two word-list baselines ship without type declarations; only what the benchmark calls. */
declare module "vader-sentiment" {
  const vader: {
    SentimentIntensityAnalyzer: {
      polarity_scores(text: string): { neg: number; neu: number; pos: number; compound: number };
    };
  };
  export = vader;
}

declare module "sentiment" {
  class Sentiment {
    analyze(text: string): { score: number; comparative: number; positive: string[]; negative: string[] };
  }
  export = Sentiment;
}
