/** Small word lists for the local text engines (language guess, keywords, sentiment). */
export const STOPWORDS: Record<string, readonly string[]> = {
  en: ['the', 'and', 'is', 'are', 'was', 'were', 'to', 'of', 'in', 'that', 'it', 'for', 'on', 'with', 'as', 'this', 'be', 'at', 'by', 'have', 'has', 'from', 'or', 'an', 'a', 'but', 'not', 'you', 'we', 'they', 'my', 'our', 'your', 'i', 'he', 'she', 'his', 'her', 'will', 'would', 'can', 'there', 'their', 'what', 'which', 'if', 'so', 'do', 'does', 'did', 'been', 'me', 'us', 'them', 'all', 'any', 'about', 'into', 'than', 'then', 'also', 'just', 'very'],
  es: ['el', 'la', 'los', 'las', 'de', 'del', 'y', 'que', 'en', 'un', 'una', 'es', 'por', 'con', 'para', 'no', 'se', 'su', 'al', 'lo', 'como', 'más', 'pero', 'sus', 'le', 'ya', 'o', 'fue', 'este', 'esta', 'muy', 'sin', 'sobre', 'también', 'me', 'mi', 'hay', 'donde', 'cuando', 'está', 'están', 'son', 'ser', 'tiene', 'yo', 'nos', 'ella', 'él'],
  fr: ['le', 'la', 'les', 'de', 'des', 'du', 'et', 'est', 'que', 'qui', 'dans', 'pour', 'pas', 'une', 'un', 'sur', 'avec', 'ne', 'se', 'ce', 'il', 'elle', 'nous', 'vous', 'ils', 'au', 'aux', 'mais', 'ou', 'sont', 'été', 'cette', 'mon', 'ma', 'mes', 'très', 'aussi', 'je', 'tu'],
  de: ['der', 'die', 'das', 'und', 'ist', 'nicht', 'ein', 'eine', 'zu', 'den', 'dem', 'mit', 'von', 'sich', 'auf', 'für', 'im', 'es', 'ich', 'sie', 'wir', 'auch', 'als', 'an', 'nach', 'wie', 'aber', 'oder', 'sind', 'war', 'bei', 'noch', 'sehr', 'mein', 'dass'],
  pt: ['o', 'a', 'os', 'as', 'de', 'do', 'da', 'dos', 'das', 'e', 'que', 'em', 'um', 'uma', 'é', 'para', 'com', 'não', 'por', 'mais', 'se', 'na', 'no', 'mas', 'foi', 'ao', 'como', 'muito', 'também', 'eu', 'você', 'ele', 'ela', 'nós', 'são', 'está'],
  it: ['il', 'lo', 'la', 'gli', 'le', 'di', 'e', 'che', 'è', 'un', 'una', 'per', 'non', 'con', 'del', 'della', 'dei', 'sono', 'ma', 'anche', 'come', 'più', 'io', 'tu', 'lui', 'lei', 'noi', 'voi', 'questo', 'questa', 'molto', 'nel', 'nella', 'al', 'alla'],
};

export const POSITIVE = new Set([
  'good', 'great', 'excellent', 'amazing', 'love', 'loved', 'like', 'happy', 'fast', 'easy', 'helpful', 'friendly', 'perfect', 'wonderful', 'best', 'awesome', 'nice', 'recommend', 'satisfied', 'thanks', 'thank', 'fantastic', 'reliable', 'clean', 'pleasant', 'quick', 'useful', 'enjoy', 'enjoyed', 'glad',
  'bueno', 'buena', 'excelente', 'genial', 'encanta', 'feliz', 'rápido', 'fácil', 'amable', 'perfecto', 'mejor', 'gracias', 'recomiendo', 'satisfecho', 'increíble',
]);

export const NEGATIVE = new Set([
  'bad', 'terrible', 'awful', 'hate', 'hated', 'slow', 'broken', 'poor', 'worst', 'angry', 'disappointed', 'disappointing', 'rude', 'expensive', 'dirty', 'bug', 'bugs', 'crash', 'crashes', 'error', 'errors', 'fail', 'failed', 'fails', 'problem', 'problems', 'useless', 'annoying', 'refund', 'late', 'wrong', 'never', 'horrible', 'unhappy',
  'malo', 'mala', 'terrible', 'pésimo', 'lento', 'roto', 'peor', 'enojado', 'decepcionado', 'caro', 'sucio', 'problema', 'problemas', 'inútil', 'horrible', 'tarde',
]);

export const NEGATIONS = new Set(['not', 'no', "don't", "didn't", "isn't", "wasn't", "aren't", "won't", 'never', 'nunca', 'sin', 'ne', 'nicht', 'não', 'non']);
