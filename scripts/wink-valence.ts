/**
 * Writes src/insights/enrichment/wink-valence.json, the table of wink-nlp's word valences the engine reads
 * (src/insights/enrichment/wink-valence.ts), from the installed English model. Run after upgrading
 * wink-nlp or its model: `npx tsx scripts/wink-valence.ts`. A change of the table changes opinion units,
 * so it comes with a new ANALYSER_VERSION.
 */
import { writeFileSync } from "node:fs";
import { computeWinkValence } from "../src/insights/enrichment/wink-valence.js";

const table = computeWinkValence();
const file = new URL("../src/insights/enrichment/wink-valence.json", import.meta.url);
writeFileSync(file, `${JSON.stringify(table)}\n`);
console.log(`${Object.keys(table).length} words → ${file.pathname}`);
