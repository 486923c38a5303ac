/**
 * Crisis detection: statements of suicidal intent or self-harm, in the many ways people phrase them.
 *
 * Safety-critical and deliberately lexical: the emotion model knows how sad a text is, not whether it
 * speaks of ending a life, and sadness alone ("I'm so sad my cat died") must not read as a crisis. The
 * patterns run over a normalised text (lower case, straight quotes, contractions and common chat spellings
 * expanded), so "I can't go on", "i cant go on" and "I cannot go on" are one case. Idioms that borrow the
 * words ("this traffic is killing me", "I could kill for a pizza", "dying to see it", "cut myself
 * shaving") are kept out by the patterns' own shape and by explicit guards.
 *
 * Three tiers: phrasings decisive on their own (RULES; and the direct phrasings of five other languages,
 * crisis-languages.ts); dying and wanting it in one clause (deathWish);
 * phrasings that count only when the text reads as distressed (CONTEXTUAL, given `affect`). Two soft
 * warning signs together (SOFT) count as well. Last comes a learned signal (crisis-model.ts), trained on
 * the sentences the rules were written from and on everyday texts: on sets written blind it catches about
 * three crisis messages in four where the rules catch four to five in ten, so the detector no longer
 * depends only on phrasings someone thought of.
 *
 * When in doubt the rules lean towards flagging: a false alarm costs a gentler, safety-minded reply; a miss
 * can cost far more. Recall and false-positive rate on the fixture sets: docs/conversation-modes.md.
 */
import { crisisModel } from './crisis-model.js';
import { APOSTROPHES, FRENCH_TOPIC, INVISIBLE, LANGUAGE_RULES, anyLanguageRule, fold } from './crisis-languages.js';

export const CRISIS_KINDS = ['suicidal_intent', 'self_harm', 'third_party'] as const;
export type CrisisKind = (typeof CRISIS_KINDS)[number];

export interface CrisisSignal {
  kind: CrisisKind;
  /** 0..1: how unambiguous the phrasing is. */
  confidence: number;
  /** Name of the rule that matched (logs and tests; never the user's text). */
  rule: string;
}

/** What the emotion model says about the same text, for the rules that need it. */
export interface Affect {
  /** The text reads as distressed (negative valence, or sadness, fear and anger dominate) or flat. */
  negative: boolean;
}

export interface Rule {
  name: string;
  kind: CrisisKind;
  confidence: number;
  pattern: RegExp;
  /** The rule does not fire when this matches too (an idiom built on the same words). */
  unless?: RegExp;
}

const SELF = '(?:my ?self|my own self)';
const INTENT = '(?:want|wants|wanted|wanting|wish|wishes|wishing|going|planning|plan|plans|ready|tempted|trying|tried|need|needs|urge|urges|longing|deserve)';
/** "this traffic makes me want to die" is hyperbole; "this pain makes me want to die" is not. */
const HYPERBOLE = /\b(?:this|that|the|these|those|my) (?!life\b|pain\b|world\b|loneliness\b|depression\b|feeling\b|sadness\b|emptiness\b|grief\b|anxiety\b|illness\b|existence\b|body\b|mind\b|thoughts\b)\w+ (?:\w+ )?(?:makes?|made|making) me want to die\b/;
/** Wanting, rather than expecting: "want to die", not "I'm going to die" (fear, or hyperbole). */
const DESIRE = '(?:want|wants|wanted|wanting|wish|wishes|wishing|ready|tempted|need|needs|longing|deserve|planning|plan|plans)';
/**
 * Speaking *about* suicide or self-harm from a safe place: a professional or moderator asking about the people
 * in their care, a policy question, recovery years on; and nothing in the text about now. Only the rules
 * that fire on the bare topic words (self_harm, suicidal, suicide_mentioned) defer to it.
 */
const SAFE_PLACE = /^(?!.*\b(?:again|lately|tonight|right now|these days|this week|anymore|relapse|relapsed|i (?:want|need) to (?:die|hurt|cut|end|kill|disappear|be dead))\b).*(?:\b(?:i am an? |as an? )(?:\w+ )?(?:nurse|doctor|counsell?or|therapist|teacher|moderator|researcher|social worker|volunteer|psychologist|psychiatrist|paramedic|medic)\b.{0,200}\b(?:patients?|students?|clients?|members?|users?|teenagers?|teens|kids|people|someone|risk|class)\b|\bi moderate\b.{0,200}\b(?:members|users|people|someone)\b|\b(?:policy|policies|guidelines?|best practice|protocol|training) (?:for|on|about|when)\b|\b(?:assess|assessing|screen|screening) (?:for )?(?:suicide|self[- ]?harm) risk\b|\b(?:years?|months?) since i (?:last )?(?:self[- ]?harmed|cut|attempted|tried)\b.{0,200}\b(?:doing (?:really )?(?:well|better|great|good)|stable|proud|recovered|recovery)\b|\b(?:stable|clean|recovered|in recovery) for (?:\d+|a few|several|many) (?:years?|months?)\b|\b(?:attempted|tried|self[- ]?harmed|cut)\b.{0,200}\b(?:\d+|many|several|a few|ten|twenty) years ago\b.{0,200}\b(?:today|now) i am\b|\b(?:it has been|been) (?:\d+|many|several|a few|ten) years\b.{0,200}\b(?:doing (?:really )?(?:well|better|great|good)|stable|recovered|proud)\b|\b(?:old|healed|faded) (?:self[- ]?harm |cutting )?scars\b|\b(?:icd-?\d*|dsm-?\d*|diagnostic criteria|how does \S+ define)\b|\b(?:evidence|research|studies|literature) (?:on|for|about|behind)\b|\b(?:school|company|workplace|our|the) (?:policy|policies|safeguarding)\b|\b(?:rating scale|screening questions|risk assessment|safety planning)\b|\b(?:free of it|clean|stable) for (?:\d+|a few|several|many|ten) years\b|\byears ago\b.{0,200}\bi am doing (?:really )?(?:well|better|great|good)\b|\b(?:researching|peer[- ]reviewed)\b|\b(?:advance directive|living will|do not resuscitate|dnr order|health ?care proxy)\b)/;
/** Hyperbole about death that says so: "I'll kill myself if this meeting runs over lol", "my phone wants to die". */
const JOKING_DEATH = /\bkill myself if (?:it|this|that|the|they|i have to|he|she|we|my)\b.{0,200}\b(?:lol|lmao|haha|jk|xd)\b|\b(?:everything i own|my (?:phone|laptop|plants?|basil|car|battery|computer|tv))\b.{0,40}\bwants? to die\b|\bwant to die \(?(?:in )?(?:the best|a good) way\b|\bnot want to die or anything\b/;
/** One pattern that matches where any of `res` does. */
function anyOf(...res: RegExp[]): RegExp {
  return new RegExp(res.map((r) => `(?:${r.source})`).join('|'));
}

const HABIT = '(?:been|keep|kept|started|start|stop myself from|cannot stop|relapsed and|relapsed into|back to)';
/** Self-harm verbs in the gerund: "started punching walls and hurting myself". */
const HARM_ING = '(?:hurting|harming|cutting|burning|punishing|hitting|punching|starving|scratching|bruising)';
/** The body parts people harm: "burning my arms", "scratching my skin raw". */
const BODY = '(?:my (?:arms?|forearms?|wrists?|legs?|thighs?|ankles?|hips?|skin|stomach|hands?|body|face|head))';
/** Ends a clause: what may follow a phrase for it to stand alone ("I'm going to jump."). */
const CLAUSE_END = '(?=\\s*(?:[.!?,;:]|$|and\\b|so\\b|because\\b|but\\b|now\\b|tonight\\b|today\\b|right now\\b))';
/*
 * Gaps inside a rule are written .{0,200}, never .*: a rule's words must meet within 200 characters, so a
 * rule whose first word repeats all through an 8 KB message scans a bounded window from each repeat instead
 * of the rest of the text (the worst case measured on such a message fell from 72 to 26 ms; 14–23 ms with the rules of round 16, all tiers read, once compiled).
 */
/** "if my mum posts one more meme I'm going to walk into the sea": a threat about the annoyance. */
const ONE_MORE = /\bif (?:\w+ ){1,6}one more (?:\w+ ){0,6}i am (?:going to|gonna) (?:walk|jump|drive|throw myself)\b/;
/** "about to end it all and submit my part alone": ending a task, with what comes next named. */
const END_IT_AND_DO = /\bend it all and (?:submit|go|move|quit|start|do|finish|hand|turn|drop|switch|leave|sell|buy|book|write|restart|redo)\b/;
/** Kitchen and work tools people cut themselves on by accident. */
const CUTTING_TOOLS = 'mandoline|mandolin|grater|slicer|box cutter|saw|lid|sheet metal|oyster';
/** Cuts from kitchen and work tools ("I keep cutting myself on the mandoline at work"). */
const TOOL_CUTS = new RegExp(`\\bcutting myself on (?:a|the|my|an) (?:${CUTTING_TOOLS}|knife|paper|can|tin)\\b`);
/** Idioms that borrow the word "die": "going to die if I eat another bite", "die of embarrassment". */
const DIE_IDIOM = '(?! (?:of|from|if|when|before|after|laughing|for|trying|waiting|inside|a little|happy|young|old|rich)\\b)';
/** take_life's words, which IDIOM_SPANS cuts out too when an idiom's tail follows them. */
const TAKE_MY_LIFE = '\\b(?:take|taking|took) my (?:own )?life';
/** "take my life back / in my own hands / seriously": what may follow "take my life" in an idiom. */
const LIFE_IDIOM_TAIL = '(?:back|in|into|to|seriously|forward|more|by|one|day|a)\\b';

/**
 * Tier 1: phrasings that speak of suicide or self-harm on their own. Each is decisive whatever the
 * emotion model says.
 */
const RULES: readonly Rule[] = [
  // "I want to kill myself", "im gonna kms", "unalive myself"
  { name: 'kill_self', kind: 'suicidal_intent', confidence: 0.97,
    pattern: new RegExp(`\\b(?:kill|killing|killed|unalive|unaliving|off|offing|end|ending|put an end to) ${SELF}\\b(?! (?:laughing|with laughter))`),
    unless: JOKING_DEATH },
  { name: 'kms', kind: 'suicidal_intent', confidence: 0.9, pattern: /\bkms\b/ },
  { name: 'suicidal', kind: 'suicidal_intent', confidence: 0.95, pattern: /(?<!\bnon[- ])\bsuicidal\b/, unless: SAFE_PLACE },
  { name: 'suicide_intent', kind: 'suicidal_intent', confidence: 0.95,
    pattern: /\b(?:commit|committing|attempt|attempted|attempting|consider|considering|contemplat\w*|(?:think|thinking|thought) (?:about|of)|plan|planning|thoughts of|urges? to|want to|tempted to|going to|tried) (?:my |committing |commit )?suicide\b|\bmy suicide\b|\bsuicide (?:is|seems|feels like) (?:my|the) (?:only|best|last) (?:option|way|choice|answer)\b/,
    unless: SAFE_PLACE },
  { name: 'suicide_note', kind: 'suicidal_intent', confidence: 0.95,
    pattern: /\b(?:my|a) (?:suicide|goodbye) (?:note|letter|plan)s?\b|\bsuicide (?:plan|pact)\b|\b(?:letters?|notes?|messages?|texts?)(?: to (?:my |all my |everyone|everybody)?\w*)? (?:saying|to say) goodbye\b/ },
  // "I've written notes for my family", said with nothing after it: the notes people leave behind
  { name: 'notes_left', kind: 'suicidal_intent', confidence: 0.7,
    pattern: /\bi (?:have )?(?:written|left) (?:notes|letters) for (?:my (?:family|kids|children|parents|wife|husband|partner|loved ones)|everyone|everybody)(?=\s*(?:[.!?;]|$))/ },
  { name: 'take_life', kind: 'suicidal_intent', confidence: 0.95,
    unless: SAFE_PLACE,
    pattern: new RegExp(`${TAKE_MY_LIFE}\\b(?! ${LIFE_IDIOM_TAIL})`) },
  { name: 'end_life', kind: 'suicidal_intent', confidence: 0.95,
    unless: END_IT_AND_DO,
    pattern: /\b(?:end|ending|ended) (?:my (?:own )?life|it all|my existence|everything(?: now| tonight| today)?(?=\s*(?:[.!?,;]|$)))/ },
  { name: 'ending_things', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:end|ending) things\b(?! (?:with|between|off|on|at|for))/ },
  { name: 'ending_it', kind: 'suicidal_intent', confidence: 0.8,
    unless: END_IT_AND_DO,
    pattern: /\b(?:feel like|want to|wanna|going to|ready to|planning to|plan to|(?:thinking|thought) (?:about|of)|think about|decided to|time to|about to|i will|i am|have to|need to|got to|must) end(?:ing)? it\b(?! (?:with|between|for|off|on|at|early|here|there|now with|by)\b)/ },
  // "I want to die", "part of me wants to die", "I just want to be dead"; "she wants to die" is someone else
  // at risk (third_party below): this rule, ranked above it, gave the user the approach for their own risk.
  { name: 'want_die', kind: 'suicidal_intent', confidence: 0.9,
    pattern: new RegExp(`(?<!\\bnot )(?<!\\b(?:he|she|they)(?: just| really| still| also| now)? )\\b${DESIRE} to (?:die|be dead)\\b${DIE_IDIOM}`),
    unless: anyOf(HYPERBOLE, JOKING_DEATH) },
  { name: 'should_die', kind: 'suicidal_intent', confidence: 0.85,
    pattern: new RegExp(`\\bshould (?:just |probably |really )?(?:die|be dead|kill myself|not be alive|not exist|not be here|end it)\\b${DIE_IDIOM}`) },
  { name: 'wish_dead', kind: 'suicidal_intent', confidence: 0.9,
    pattern: /\bwish (?:that )?i (?:was|were|had|would be|could be) (?:dead|gone|never (?:been )?born|not (?:alive|born|here|around))\b|\bwish (?:that )?i (?:would have |would |had )?never (?:been born|born|existed)\b/ },
  { name: 'wish_could_die', kind: 'suicidal_intent', confidence: 0.9,
    pattern: /\b(?:wish|hope) (?:that )?i (?:could |would |will )?(?:just )?(?:die|stop existing|cease to exist|never wake up|not wake up|do not wake up|will not wake up)\b/ },
  { name: 'sleep_forever', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:wish|want|hope|wishing|wanting)(?: that)?(?: i could| to| i would| i)? (?:just )?(?:go to sleep|fall asleep|sleep) (?:forever|for ever|permanently)\b(?! (?:after|this|tonight|on|in|until|till|when|because|once)\b)/ },
  { name: 'not_want_live', kind: 'suicidal_intent', confidence: 0.9,
    pattern: /\b(?:do not|did not|no longer|never|dont) (?:think i |know if i |feel like i |believe i )?(?:want|deserve) to (?:live|be alive|exist|keep living|go on living|be here anymore|be around anymore|be alive anymore|wake up)\b(?! (?:in|with|at|near|on|there|here|abroad|alone|together|through|next|until|early)\b)/ },
  { name: 'end_suffering', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\bend (?:my|this|the|all (?:my|this|the)) (?:suffering|pain|misery|torment)(?: (?:permanently|forever|for good|once and for all))\b|\bend (?:my|this) (?:suffering|misery) (?:by|through) (?:dying|death|killing)\b/ },
  { name: 'the_night_i_end_it', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:night|day|time|moment|week|weekend) (?:that )?i (?:end it|end it all|die|kill myself|go through with it|do it)\b(?=.{0,200}\b(?:tonight|today|tomorrow|this|made up my mind|decided|ready)\b)|\b(?:tonight|today|tomorrow|this weekend) is the (?:night|day) i (?:end it|die|kill myself)\b/ },
  { name: 'obsessed_with_dying', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:cannot stop|could not stop|keep|always|constantly|obsessively|all day) (?:thinking|fantasi[sz]ing|dreaming) (?:about|of) (?:dying|death|being dead|my death|not being alive|not existing|ending it)\b/ },
  // "I'd rather die lol" about a dentist appointment: the laugh marks the hyperbole
  { name: 'rather_be_dead', kind: 'suicidal_intent', confidence: 0.85, unless: /\brather (?:be dead|die) (?:lol|lmao|haha|jk)\b/,
    pattern: /\brather (?:be dead|die|not be alive|not exist|not wake up|not be (?:a person|here|around|anyone|anything))(?: than (?:keep|continue|go on|live|living|feel|feeling|suffer|suffering|be like this|wake up))?(?=\s*(?:[.!?,;]|$|than (?:keep|continue|go on|live|living|feel|feeling|suffer|suffering|be like this|wake up)\b))/ },
  { name: 'death_only_escape', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:death|dying|being dead|suicide|killing myself)\b.{0,200}\b(?:only|last|best|one) (?:escape|way out|option|solution|answer|choice)\b|\bno (?:way out|escape|other way) (?:but|except|other than) (?:death|dying|to die|suicide)\b/ },
  // "would": death imagined for oneself; "her death was a mercy" is grief, not a wish
  { name: 'death_would_be_relief', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:death|dying|being dead|not waking up|not existing|never waking up) (?:would|will|could) (?:be|feel like|come as) (?:a |such a |the )?(?:sweet |welcome )?(?:mercy|blessing|gift|relief|release|rest|escape|welcome relief)\b/ },
  { name: 'funeral_relief', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:imagine|imagining|picture|picturing|thinking about|think about|dream about|dreaming about) my (?:own )?(?:funeral|death|grave)\b.{0,200}\b(?:relief|peace|peaceful|finally|better off|free)\b/ },
  // "it's time for me to go for good." with nothing after it (not "... from this job")
  { name: 'time_to_go', kind: 'suicidal_intent', confidence: 0.75,
    pattern: /\btime for me to (?:go|leave|be gone) (?:for good|forever|permanently)(?=\s*(?:[.!?,;]|$))/ },
  { name: 'passive_wish', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:hope|hoping|wish|wishing|pray|praying) (?:that )?(?:my|the) (?:plane|flight|car|bus|train) (?:crashes|goes down|will crash|would crash)\b|\b(?:hope|hopes|hoping|wish|wishing|pray|praying)(?: that)? i (?:do not|will not|would not|never|could not) (?:survive|make it through|pull through|come out of)\b|\b(?:hope|hoping|praying)(?: that)? i (?:crash|die|get killed|do not come back|never come back)\b(?! (?:of|from|laughing|trying)\b)|\b(?:hope|hoping|wish|wishing|pray|praying)(?: that)? i (?:get|got|will get|would get|could get) (?:hit|run over|killed|shot)\b|\b(?:hope|hoping|wish|pray|praying)(?: that)? (?:a|the|some) (?:car|bus|truck|train|plane|cancer|illness|disease|tumou?r|virus|sea|ocean) (?:hits|kills|takes|took|(?:will|would|could) (?:hit|kill|take)) me\b/ },
  { name: 'why_keep_living', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\bwhy (?:do )?i (?:even )?bother (?:waking up|getting up|living|staying alive|existing)\b|\bwhy (?:should|would|do|must) i (?:keep|bother|go on|continue|even) ?(?:living|existing|being alive|waking up|going on|staying alive|to live)\b/ },
  { name: 'will_to_live', kind: 'suicidal_intent', confidence: 0.9,
    pattern: /\blost (?:the|my|all|any) (?:will|reason|desire|wish) to (?:live|go on|keep living|stay alive)\b|\bno (?:will|desire|wish) to (?:live|go on|keep living|stay alive)\b/ },
  { name: 'no_point_living', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:no|not|zero|without|nothing to|never|cannot) (?:see |find |have |think of |got )?(?:any |a |one |the |single )?(?:point|reason|purpose|use|will|reasons|motivation) (?:in |to |of |for )?(?:living|life|go on|going on|being alive|staying alive|stay alive|to live|live|keep going|keeping going|keep living|keeping living|existing|exist|carry on|carrying on|wake up|waking up)\b/ },
  { name: 'see_no_point', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:no|the|any) point (?:in |of |to )?(?:living|being alive|going on|existing|carrying on|staying alive|waking up|anything anymore|trying anymore|my life|life anymore)\b/ },
  { name: 'nothing_to_live_for', kind: 'suicidal_intent', confidence: 0.9,
    pattern: /\bnothing (?:left )?to live for\b|\bno (?:reason|point|purpose) (?:for me )?(?:to|in) (?:live|be alive|being alive|stay alive|keep living|go on|exist|existing)\b/ },
  { name: 'not_worth_living', kind: 'suicidal_intent', confidence: 0.9,
    pattern: /\bnot worth living\b|\b(?:life|living|my life) is not worth it\b/ },
  { name: 'better_off_without_me', kind: 'suicidal_intent', confidence: 0.9,
    pattern: /\bbetter off (?:dead|gone|in the ground|in a grave|not existing|not (?:here|around|alive)|never (?:having been|been) born)\b|\b(?:better off|happier|better|easier|simpler|lighter|calmer|quieter)(?: for (?:everyone|everybody|them|all of them|my family))? (?:without me|if i (?:was|were|am|had|would be) (?:gone|dead|never born|never been born|not (?:here|around|alive))|if i (?:died|disappeared|killed myself|ended it|was not here|were not here|was not around|were not around)|if i (?:had |would have |would )?never (?:existed|been born|been here))\b|\b(?:everyone|everybody|they|the world|my family|people) would be (?:happier|better|better off) without me\b|\bfavou?r by (?:dying|killing myself|disappearing|being gone|not being (?:here|around|alive))\b|\b(?:do|doing|did) (?:everyone|everybody|them|the world|my family|us all|all of them) a favou?r if i (?:died|disappeared|was gone|were gone|killed myself|was dead|were dead|ended it)\b|\b(?:would|will) be (?:relieved|glad|happy|happier|fine|better|better off|okay|ok|at peace)\b.{0,200}\bif i (?:was|were) (?:gone|dead|not (?:here|around|alive))(?=\s*(?:[.!?,;]|$|and\b|so\b|because\b|forever\b|for good\b))|\bif i (?:was|were) (?:gone|dead)\b.{0,200}\b(?:would|will) be (?:relieved|glad|happy|happier|fine|better|better off|okay|ok)\b/ },
  { name: 'nobody_would_miss', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:nobody|no one|noone|no-one|anyone|anybody) (?:would|will) (?:even )?(?:miss me|notice|care) (?:if|when) i (?:was|were|am|die|died|disappear|disappeared|killed|ended|gone|never came back|never come back|did not come back|vanished)\b/ },
  { name: 'gone_unnoticed', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\bif i (?:died|disappeared|vanished|was gone|were gone|was dead|were dead|killed myself|ended it)(?: forever| for good| tomorrow| today| tonight)?\b,? (?:no one|nobody|noone|no-one|not a soul) (?:would|will) (?:even )?(?:care|notice|miss me|miss it|mind|cry|come)\b/ },
  { name: 'nobody_would_miss_me', kind: 'suicidal_intent', confidence: 0.8,
    pattern: new RegExp(`\\b(?:nobody|no one|noone|no-one) (?:would|will) (?:even |ever |really )?miss me${CLAUSE_END}`) },
  { name: 'never_wake_up', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:want|wish|wishing|wanting|hope|hoping) (?:to |i could |that i could |i would )?(?:go to sleep|fall asleep|sleep) and (?:stay asleep|stay that way|never come back)(?: forever| for good)?\b|\b(?:go to sleep|fall asleep|sleep|close my eyes) and (?:never|not) (?:wake|open them) ?up\b|\b(?:hope|hoping|wish|pray|praying) (?:that )?i (?:never|do not|will not|dont) wake up\b/ },
  { name: 'disappear_forever', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:wish|want|wanting|wishing|would rather|rather) (?:that )?(?:i could |to |i would |i )?(?:just )?(?:disappear|vanish|stop existing|cease to exist|not exist|fade away)(?: forever| for good| permanently| from (?:this|the) (?:world|earth|planet)| from existence| off the face of the earth)?(?=\s*(?:[.!?,;]|$|and\b|so\b|because\b))|\b(?:wish|want|wanting|wishing) (?:that )?(?:i could |to |i would )?go away (?:forever|for good|permanently)(?=\s*(?:[.!?,;]|$|and\b|so\b|because\b))/ },
  { name: 'want_it_over', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:want|wish|need|wanting|wishing) (?:it all|everything|my life|all of it) (?:to be )?over(?=\s*(?:[.!?,;]|$|and\b|so\b|because\b|already\b|now\b))|\b(?:want|need|wanting|wish) out of (?:this|my) (?:life|existence|world)\b|\b(?:want|need|wanting) out of (?:life|living|existence)\b|\b(?:want|wish|need|wanting|wishing) (?:for )?(?:it all|everything|my life|this life|all of it|it all just) to (?:end|be over|stop)(?: for good| forever| now| already| permanently| once and for all)?(?=\s*(?:[.!?,;]|$|and\b|so\b|because\b))|\b(?:want|wish|need|wanting|wishing) (?:for )?(?:the|this|my) (?:pain|suffering|hurting|misery) to (?:end|be over|stop),? (?:permanently|forever|for good|once and for all)\b/ },
  { name: 'how_to_end_it', kind: 'suicidal_intent', confidence: 0.75,
    pattern: /\b(?:think|thinking|thought|wonder|wondering|research|researching|researched|googling|googled|looked up|looking up|search|searching|searched|reading about|read about) (?:about |up |of |for |into )?(?:how|(?:the )?(?:\w+ )?(?:ways?|methods?|way)) to (?:end it|end it all|end my life|die|do it painlessly|kill myself|overdose)\b/ },
  // "I want to be gone", but not "I want to be gone by five"
  { name: 'want_gone', kind: 'suicidal_intent', confidence: 0.8,
    pattern: new RegExp(`\\b${DESIRE} to be gone(?: forever| for good| permanently)?${CLAUSE_END}`) },
  { name: 'stop_existing', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:stop|cease) (?:existing|to exist|being alive|breathing|waking up)\b|\b(?:want|wish|need|going|ready) to not (?:exist|be alive|be here|wake up|live)\b|\b(?:want|wish|need|going|ready) to stop living\b(?! (?:in|with|like that|at|for)\b)|\bdisappear (?:forever|for good)\b|\b(?:wish|want) (?:that )?i (?:could )?(?:not|never) exist\b|\b(?:leave|leaving) this world\b/ },
  { name: 'tired_of_living', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:am|i am) done (?:being alive|living|existing)(?=\s*(?:[.!?,;]|$|and\b|so\b|because\b|anymore\b))|\b(?:hate|hating|despise|loathe|cannot stand|cannot bear|resent) (?:being alive|living|existing|my existence|waking up (?:every|each) (?:day|morning)|that i am (?:still )?alive|still being alive)\b(?! (?:in|at|with|here|there|on|near|next|so|like|alone|by|under|without)\b)|\b(?:tired|sick|exhausted|weary) of (?:living|being alive|life|existing|waking up)\b(?! (?:in|at|with|here|there|on|paycheck|hand|out|off|from|under|alone|month|week|day|so|early|next)\b)|\bdone with (?:life|living|being alive|existing)\b(?! (?:in|at|with|here|there|on|paycheck|like|off|under|out)\b)|\bgiv(?:e|ing) up on (?:life|living)\b|\b(?:tired|sick|exhausted|weary) of (?:fighting|trying|struggling) to (?:stay alive|live|keep living|survive|keep going)\b/ },
  { name: 'cannot_go_on', kind: 'suicidal_intent', confidence: 0.8,
    unless: /\bcannot go on like this (?:financially|money[- ]wise|on this (?:salary|budget|income|wage))\b/,
    pattern: /\bcannot (?:go on|keep going|carry on|keep living|go on living|live like this)(?: (?:anymore|any more|any longer|like this|living))?\b(?! (?:with|at|in|until|for|to|through|on)\b)/ },
  { name: 'doubt_go_on', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:do not think|doubt|not sure|do not know if|do not know how|there is no way|no way) i (?:can|could) (?:go on|keep going|carry on|keep living|go on living|live like this|survive this)(?: (?:anymore|any longer|like this|living))?(?=\s*(?:[.!?,;]|$|and\b|so\b|because\b|anymore\b))/ },
  { name: 'overdose', kind: 'suicidal_intent', confidence: 0.9,
    pattern: /\b(?:want|going|plan|planning|tempted|thinking about|thought about|thinking of|tried|trying|need) to overdose\b|\boverdos(?:e|ing) (?:on purpose|tonight|on my)\b|\b(?:take|taking|swallow|swallowing|took) (?:all|a (?:whole )?bottle of|a handful of|every one of|the rest of) (?:my |the |those |these )?(?:pills|tablets|meds|medication|sleeping pills|painkillers)\b|\bstockpil\w* (?:my |the )?(?:pills|meds|tablets|medication|painkillers)\b|\b(?:took|taken|take|taking|swallowed|swallow) (?:way |far )?(?:too many|a lot of|all of|lots of|a bunch of|loads of|a handful of) (?:my |the |those )?(?:pills|tablets|meds|painkillers|sleeping pills)\b.{0,200}\b(?:on purpose|deliberately|intentionally|to die|to end it|so i would not wake up|so i do not wake up)\b/ },
  { name: 'pills_quantity', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:take|taking|took|swallow|swallowing|swallowed|down|downing) (?:all|every one of|the whole bottle of|a whole bottle of|a bottle of|a handful of) (?:my |the |those |these |of my |of the )?(?:\w+ )?(?:pills|tablets|meds|medication|medications|painkillers|antidepressants|sleeping pills|sleeping tablets|paracetamol|tylenol|acetaminophen|insulin|opioids|oxy|benzos)\b|\bhow many (?:\w+ )?(?:pills|tablets|sleeping pills|painkillers) it (?:would|will|does|could) take\b|\b(?:take|taking|took|swallow|swallowing|swallowed|down|downing) every (?:single )?(?:\w+ )?(?:pill|tablet|capsule|antidepressant|painkiller|sleeping pill)s?\b|\benough (?:pills|tablets|meds|medication|painkillers|sleeping pills)\b.{0,200}\b(?:to do it|to end it|to die|to kill myself|to not wake up)\b|\bhow many (?:of (?:my|the|these|those) )?(?:[\w']+ ){0,3}(?:pills|tablets|meds|medication|medications|painkillers|antidepressants|sleeping pills|sleeping tablets|paracetamol|tylenol|acetaminophen|insulin|opioids|oxy|benzos) (?:would it take|does it take|to take|do i need|would i need|would kill|to die|to overdose)\b|\b(?:going to|want to|plan to|planning to|about to|ready to) (?:take|swallow|down) (?:a lot of|lots of|loads of|too many|a bunch of|all of|all) (?:my |the |those |these )?(?:\w+ )?(?:pills|tablets|meds|painkillers|sleeping pills)\b.{0,200}\b(?:tonight|today|at once|on purpose|now)\b|\bstockpil\w* (?:my |the |some |a lot of )?(?:\w+ )?(?:pills|tablets|meds|medication|medications|painkillers|antidepressants|sleeping pills|sleeping tablets|paracetamol|tylenol|acetaminophen|insulin|opioids|oxy|benzos)\b|\b(?:pills|tablets|meds|medication|medications|painkillers|antidepressants|sleeping pills|sleeping tablets|paracetamol|tylenol|acetaminophen|insulin|opioids|oxy|benzos) (?:all )?at once\b/ },
  // Means kept ready "for when I am ready": a plan, whatever the emotion model reads in "ready".
  { name: 'means_ready', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:pills|tablets|meds|medication|painkillers|sleeping pills|razor(?: blade)?s?|blades?|rope|noose|gun)\b.{0,200}\b(?:lined up|counted out|saved up|set aside|put aside|hidden away|stashed)\b.{0,200}\bi am ready\b|\b(?:pills|tablets|meds|medication|painkillers|sleeping pills|razor(?: blade)?s?|blades?|rope|noose|gun)\b.{0,200}\bfor when i am ready\b/ },
  { name: 'method', kind: 'suicidal_intent', confidence: 0.9,
    pattern: /\b(?:hang|hanging|drown|drowning|shoot|shooting|poison|poisoning|gas|gassing|suffocate|suffocating) (?:my ?self)\b|\b(?:want|wanted|going|planning|plan|(?:thinking|thought) (?:about|of)|urge|urges|tempted|ready|feel like|considering|imagining myself|imagine myself|picturing myself|picture myself)(?: to)? (?:jump|jumping|step|stepping|throw myself|throwing myself|walk|walking|lie down|lying down|drive|driving|crash|crashing)(?: my car)? (?:off|from|in front of|into) (?:a|the|this|that|some|oncoming|my|our) (?:bridge|building|roof|cliff|balcony|train|bus|car|truck|tower|overpass|traffic|window|wall|tree)\b|\bslit(?:ting)? my (?:wrists?|throat)\b/ },
  // A decision or a plan, said without naming the act
  { name: 'decided_tonight', kind: 'suicidal_intent', confidence: 0.7,
    pattern: /\b(?:decided|made up my mind|it is settled)\b.{0,200}\b(?:tonight|today|tomorrow|this weekend) is the (?:night|day)(?=\s*(?:[.!?,;]|$))/ },
  { name: 'plan_and_when', kind: 'suicidal_intent', confidence: 0.75,
    pattern: /\bi have (?:a|the) plan\b.{0,200}\bi know (?:when|how|where) i am going to do it\b|\bi (?:have thought|have been thinking|thought) about how i would do it\b/ },
  // Means, and the thought that keeps returning to them
  { name: 'means_in_mind', kind: 'suicidal_intent', confidence: 0.75,
    pattern: /\b(?:pills|tablets|rope|noose|gun|blade|razor|bridge|ledge|roof)\b.{0,200}\b(?:(?:keep|cannot stop|always|i|i have been|been) (?:thinking|think) about (?:it|them|using (?:it|them)|how (?:high|far|deep|easy|quick) it (?:is|would be))|(?:it|that) would be (?:so )?(?:easy|simple|quick))\b/ },
  { name: 'use_it_on_self', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:blade|razor|rope|noose|gun|pills|knife)\b.{0,200}\b(?:ready|loaded|here)\b.{0,200}\b(?:going to|about to|ready to|want to) use (?:it|them)\b|\b(?:use|turn|point|pointing|turning|using) (?:it|the gun|a gun|the knife|a knife|the blade|the pills) on (?:myself|himself|herself|themselves)\b/ },
  { name: 'not_needed', kind: 'suicidal_intent', confidence: 0.75,
    pattern: /\b(?:the world|this world|everyone|my family|nobody|no one) (?:does not|do not|would not|will not) (?:need|want) me (?:in it|here|around|alive|anymore)\b/ },
  { name: 'sorry_to_wake', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:disappointed|sad|upset|angry|annoyed|sorry|devastated) (?:that |when )?i (?:woke up|wake up|am still alive|am still here|survived|did not die)(?=\s*(?:[.!?,;]|$|again\b|every\b|each\b))/ },
  { name: 'not_make_it', kind: 'suicidal_intent', confidence: 0.75,
    pattern: /\b(?:will not|do not think i will|not going to|may not|might not) make it to (?:my |the |next )?\w+\b.{0,200}\b(?:do not want to|hope not|do not care to|and i am fine with that)\b|\bcannot (?:see|imagine|picture) myself (?:being )?(?:alive|here|around|living)\b(?! (?:in|with|at|there|without|abroad|alone|like)\b)/ },
  { name: 'leave_life', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:life|living|existence|it all)\b.{0,200}\b(?:ready|want|going|need|about) to leave (?:it|this life|life|this world|it all)(?=\s*(?:[.!?,;]|$|behind\b|now\b|tonight\b))/ },
  { name: 'punish_self', kind: 'self_harm', confidence: 0.85,
    pattern: new RegExp(`\\bpunish(?:ing|ed)? ${SELF} (?:by|with) (?:not eating|${HARM_ING}|(?:a |my )?(?:belt|fists?|nails|lighter|blade|razor|ruler|hairbrush))\\b`) },
  // "I hurt myself again last night"; not "hurt myself again at the gym"
  { name: 'hurt_self_again', kind: 'self_harm', confidence: 0.8,
    pattern: new RegExp(`\\b(?:hurt|harmed|cut|burned|burnt) ${SELF} again\\b(?! (?:at|in|on|playing|while|during|lifting|running|skiing|with|when|doing|training)\\b)`) },
  // self-harm
  { name: 'self_harm', kind: 'self_harm', confidence: 0.95, pattern: /\bself[- ]?(?:harm|harming|harmed|injury|injuring|mutilation)\b/,
    // a screening question answered "no", a professional asking about signs, a recovery told as such
    unless: anyOf(SAFE_PLACE, /\b(?:asked|asks|asking|screening|questionnaire)\b.{0,200}\bself[- ]?harm\w*\b.{0,200}\b(?:i said no|i answered no|is that (?:a )?normal)\b|\b(?:warning )?signs of self[- ]?harm\b|\bas a (?:\w+ )?(?:counsell?or|teacher|nurse|doctor|therapist|moderator|researcher|social worker|volunteer)\b|\b(?:years?|months?) since my last self[- ]?harm\b.{0,200}\b(?:doing (?:well|better|great|good)|proud|recovered|recovery|what helped)\b/) },
  { name: 'cut_self', kind: 'self_harm', confidence: 0.9,
    pattern: new RegExp(`\\b(?:cut|cuts|cutting|slice|slicing|carve|carving) (?:${SELF}|my (?:arms?|forearms?|wrists?|legs?|thighs?|ankles?|hips?|skin|stomach))\\b(?! (?:shaving|while|when|by accident|accidentally|(?:a|an|some|another) (?:slice|piece|bit|portion|share|wedge|chunk|hunk|serving|break|deal)|on (?:a|the|some|my|an) (?:paper|glass|knife|can|tin|edge|sharp|broken|piece|fence|nail|${CUTTING_TOOLS})|with (?:a|the) (?:kitchen )?knife while|opening|chopping|cooking|making))`) },
  { name: 'cutting_again', kind: 'self_harm', confidence: 0.9,
    unless: TOOL_CUTS,
    pattern: new RegExp(`\\b${HABIT} cutting(?: again)?(?=\\s*(?:[.!?,;]|$|again\\b|and\\b|but\\b|so\\b|because\\b|since\\b|when\\b|lately\\b|recently\\b|every\\b|at night\\b|last\\b|for (?:weeks|months|years|days)\\b|myself\\b|my (?:arms?|wrists?|legs?|thighs?)\\b))`) },
  { name: 'until_bleed', kind: 'self_harm', confidence: 0.85,
    pattern: /\b(?:scratch|scratching|scratched|pick|picking|picked|bite|biting|hit|hitting|punch|punching|bang|banging|cut|cutting|dig|digging)(?: at| into)? (?:my ?self|my (?:arms?|wrists?|legs?|thighs?|skin|head|face|hands?))\b.{0,200}\b(?:until|till|til|so) (?:they|it|i) (?:bleeds?|bled|bruises?|bruised)\b/ },
  { name: 'burn_with', kind: 'self_harm', confidence: 0.9,
    pattern: /\bburn(?:ing|ed|t|s)? (?:my ?self|my (?:arms?|wrists?|legs?|thighs?|skin|hands?)) with (?:a |my )?(?:cigarettes?|lighters?|matches|a lighter)\b/ },
  { name: 'urge_to_cut', kind: 'self_harm', confidence: 0.85,
    pattern: /\b(?:urges?|tempted|temptation|craving|cravings|itching|want|wanting|need|needing) to (?:cut|self harm|self-harm|burn myself|hurt myself)\b(?! (?:\d+|the|a|my hair|back|down|it|them|in|out|ties|class|costs|carbs|corners|him|her|off|up|through|loose|to|weight|pounds|lbs|kilos|calories|sugar|some|more|costs)\b)/ },
  { name: 'giving_away', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:gave|giving|give) away (?:all )?(?:of )?my (?:stuff|things|belongings|possessions|clothes|pets?|cat|dog)\b.{0,200}\b(?:will not need|not need|no longer need|do not need|not going to need|won't need)\b/ },
  { name: 'hurt_self_intent', kind: 'self_harm', confidence: 0.85,
    unless: TOOL_CUTS,
    pattern: new RegExp(`\\b(?:${INTENT}|${HABIT}|feel like|feeling like|(?:think|thinking|thought) (?:about|of)|might|scared i will|afraid i will|afraid i might|scared i might|cannot stop|could not stop) (?:to |myself from )?(?:\\w+ ){0,2}(?:hurt|hurting|harm|harming|punish|punishing|burn|burning|starve|starving|hit|hitting|scratch|scratching|cut|cutting) ${SELF}\\b`) },
  { name: 'hurt_self_on_purpose', kind: 'self_harm', confidence: 0.9,
    pattern: new RegExp(`\\b(?:hurt|hurting|harm|harming|burn|burned|burnt|burning|hit|hitting|cut|cutting|scratch|scratching|scratched|pick|picking|bite|biting) (?:${SELF}|${BODY}) (?:\\w+ ){0,4}(?:on purpose|deliberately|intentionally|to feel|so i (?:can|could) feel|to punish)`) },
  { name: 'habit_harm', kind: 'self_harm', confidence: 0.85,
    unless: TOOL_CUTS,
    pattern: new RegExp(`\\b${HABIT} (?:\\w+ ){0,3}${HARM_ING} (?:${SELF}|${BODY})\\b`) },
  { name: 'harm_copes', kind: 'self_harm', confidence: 0.85,
    pattern: new RegExp(`\\b(?:cutting|self harm|hurting ${SELF}|burning ${SELF}|${HARM_ING} ${SELF}) (?:is|was|has been|helps|helped|makes|made) (?:the only (?:thing|way)|me feel|me cope|how i cope|my way|a relief|the relief|my release|what helps)`) },
  // Round 10 (the held-out set of round 9, once measured): means kept for later, acts half done, and
  // staying alive only for others.
  { name: 'hoarding_means', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:saving|saved|hoarding|hoarded|collecting|stashing|stashed|keeping) (?:up )?(?:all )?(?:my |the |some |of my )?(?:\w+ )?(?:pills|meds|tablets|medication|painkillers|sleeping pills|antidepressants)\b.{0,200}\b(?:all at once|at once|all of them|in one go|just in case|for (?:when|the day|the right)|i (?:finally )?have enough|enough now|i know (?:exactly )?what i am going to do with (?:them|it))\b/ },
  { name: 'crash_on_purpose', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:want|wanted|wanting|going|tempted|urge|urges|plan|planning|(?:think|thinking|thought) (?:about|of)|picture|picturing|imagine|imagining) (?:to )?(?:my ?self )?(?:crash|crashing|drive|driving|steer|steering|swerve|swerving) (?:my car |the car )?(?:into (?:a |the )?(?:\w+ )?(?:tree|wall|truck|lorry|barrier|oncoming|river|lake|sea|bridge)|off (?:a|the) (?:bridge|cliff|road))\b|\b(?:crash|crashing|wreck|wrecking|crashed) (?:my|the) (?:car|bike|motorbike)\b.{0,200}\b(?:on purpose|deliberately|intentionally|and not survive|so i die)\b/ },
  { name: 'do_something_to_self', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:do|doing|did) (?:something|anything) (?:\w+ )?to (?:my ?self)\b/ },
  { name: 'cannot_do_life', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\bcannot do (?:life|living|being alive|existing|this life)(?=\s*(?:[.!?,;]|$|anymore\b|any longer\b|and\b|so\b|because\b))/ },
  { name: 'no_point_me_here', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\bwhat is the point of me(?=\s*(?:[.!?,;]|$))|\b(?:no|any|what is the) point (?:in |of )?(?:me|my) (?:being (?:here|alive|around)|existing|living|staying alive|still being here|being on this earth)\b/ },
  { name: 'almost_did_it', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:bridge|ledge|roof|rooftop|terrace|balcony|tracks|platform|cliff|building|window|overpass)\b.{0,200}\b(?:almost|nearly) (?:jumped|stepped off|stepped in front|did it|went through with it|did(?=\s*(?:[.!?,;]|$)))/ },
  { name: 'alive_for_others', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:staying|stay|stayed|keeping myself|keep myself|kept myself) alive (?:only |just )?(?:for|because of) (?:other people|others|my (?:family|kids|children|mom|mum|dad|parents|partner|wife|husband|friends|sister|brother|pets?|dog|cat)|them|everyone|everybody|you)\b|\b(?:only|the only) reason i am (?:still (?:alive|here|breathing)|alive)\b/ },
  { name: 'indifferent_to_death', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:do not|no longer|never|stopped caring|stop caring) (?:care )?(?:if|whether) i (?:(?:live or die|die|am alive)\b(?! (?:on|of|from|trying|laughing|in the attempt)\b)|(?:wake up|make it|survive)(?=\s*(?:[.!?,;]|$|anymore\b|or not\b)))/ },
  { name: 'hope_heart_stops', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:hoping|hope|wishing|wish|praying|pray) (?:that )?(?:i|my heart) (?:will|would|could|might) (?:stop (?:breathing|beating|existing)|stop)(?=\s*(?:[.!?,;]|$|and\b|so\b|because\b|forever\b|for good\b))/ },
  { name: 'bleed_out', kind: 'suicidal_intent', confidence: 0.85,
    pattern: new RegExp(`\\b${DESIRE} to bleed (?:out|to death)\\b(?! (?:the|of|from)\\b)|\\bbleed ${SELF} (?:out|dry)\\b`) },
  { name: 'keep_wounds_open', kind: 'self_harm', confidence: 0.8,
    pattern: /\b(?:picking|pick|picked|reopening|reopen|reopened|tearing|ripping|scratching) (?:at )?(?:open )?my (?:wounds?|scabs?|scars?|cuts?|stitches)\b.{0,200}\b(?:never heal|do not heal|will not heal|cannot heal|on purpose|to feel|to bleed|so they bleed|again)\b/ },
  { name: 'into_the_water', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:walk|walking|swim|swimming|wade|wading) (?:out )?into the (?:sea|ocean|river|lake|water|waves)\b.{0,200}\b(?:not come back|never come back|not coming back|never coming back|not return|never return|and drown|let it take me|until i (?:cannot|sink|drown|disappear|go under)|and keep (?:walking|swimming|going))\b|\bdrown my ?self\b/ },
  { name: 'let_me_die', kind: 'suicidal_intent', confidence: 0.85,
    pattern: new RegExp(`(?<!\\bnot )\\blet me die\\b${DIE_IDIOM}`) },
  // Round 11 (the blind held-out set of round 10, once measured): the act implied by what comes after it,
  // method and lethality questions, and self-harm with other verbs and means.
  { name: 'not_needed_after', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:will not|do not|am not going to|not going to) (?:be needing|need) (?:them|it|these|those|any of (?:it|this|them|these)|my \w+) (?:where i am going|after (?:tonight|tomorrow|today|this weekend))\b/ },
  { name: 'not_a_bother_long', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:will not|am not going to|not going to) be (?:a (?:bother|burden|problem|nuisance)|bothering|burdening|in (?:anyone's|your|their|the) way)(?: to (?:anyone|anybody|you|them|everyone|anybody))?(?: for)? (?:much longer|anymore|for long|after (?:tonight|today|this))\b|\b(?:soon|after tonight|after today|not for long|not much longer)\b.{0,200}\b(?:will not|do not|would not) have to (?:put up with|deal with|worry about|look after|take care of) me\b/ },
  { name: 'make_sure_not_wake', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:make sure|so that|so) i (?:do not|never|will not|would not) wake (?:up|back up)\b(?! (?:late|early|the|my|in|at|tired|groggy|with|hungry|every|during|before|when)\b)/ },
  { name: 'worth_more_dead', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\bworth more (?:to (?:them|my family|everyone) )?dead (?:than alive)?\b|\b(?:life insurance|insurance money)\b.{0,200}\bif i (?:died|was dead|were dead|killed myself)\b/ },
  { name: 'checked_out_for_good', kind: 'suicidal_intent', confidence: 0.75,
    pattern: /\b(?:check|checked|checking) out (?:for good|permanently|of (?:life|this life|this world|existence))\b/ },
  { name: 'lethality_question', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:jump|jumped|jumping|fell|fall|hang|hanging|hanged|overdose|overdosing|pills|bridge|balcony|roof|train|gun|drown|drowning)\b.{0,200}\b(?:would|will|does|is) (?:it|that|this) (?:be )?(?:quick|painless|instant)\b.{0,200}\b(?:feel it|hurt|die|survive)\b|\b(?:painless|quick|quickest|easy|easiest|peaceful|least painful|surest|best) (?:way|ways|method|methods) to (?:die|end it|end my life|kill myself|not wake up)\b(?! in (?:minecraft|the game|game|fortnite)\b)/ },
  { name: 'harm_tool_to_body', kind: 'self_harm', confidence: 0.9,
    pattern: anyOf(
      new RegExp(`\\b(?:took|take|taking|put|putting) (?:a |the |my )?(?:blade|razor|knife|lighter|scissors|needle|pin|safety pin) to (?:${SELF}|${BODY}|my (?:thighs?|hips?|wrists?|arms?))\\b|\\b(?:carve|carved|carving|etch|etched|etching|scratch|scratched|scratching|cut|cutting) (?:\\w+ ){0,2}into ${BODY}\\b`),
      new RegExp(`\\b(?:used|use|using) (?:a |the |my )?(?:razor|blade|knife|lighter|scissors|compass|pin|broken glass) on (?:${SELF}|my (?:thighs?|hips?|wrists?|arms?|stomach|skin))\\b`),
      /\bhow deep (?:i would|i) (?:have|need) to (?:go|cut)\b|\b(?:blades?|razors?|knife|lighter|scissors|glass)\b.{0,200}\bused (?:it|them|one) (?:\w+ ){0,3}on (?:my ?self|my (?:thighs?|arms?|forearms?|wrists?|hips?|ankles?|stomach|skin|legs?))\b|\b(?:blade|razor) out of (?:a |my |the )?(?:pencil )?sharpener\b/) },
  { name: 'hit_self', kind: 'self_harm', confidence: 0.85,
    pattern: new RegExp(`\\b(?:punch|punched|punching|hit|hitting|slap|slapping|slapped|smack|smacking|smacked) ${SELF} (?:in the|on the|so hard|until|when|whenever|every time|again)\\b|\\bgave ${SELF} (?:a )?(?:black eye|bruises?|concussion|scars?)\\b|\\bbang(?:ing|ed)? my head (?:against|on|into) (?:the |a )?(?:wall|floor|door|desk)\\b.{0,200}\\b(?:until i (?:get dizzy|am dizzy|bleed|pass out|see stars|black out)|so hard (?:it|that i) (?:bled|bruised)|on purpose)\\b`) },
  { name: 'punish_body', kind: 'self_harm', confidence: 0.8,
    pattern: /\b(?:punish|punishing|starve|starving) my body\b|\b(?:have not|did not|not) eaten (?:in|for) \w+ (?:days|weeks) (?:on purpose|because i (?:do not )?deserve|as (?:a )?punishment)\b|\b(?:stopped|stop|quit) eating on purpose\b|\b(?:do not|did not) deserve (?:food|to eat|to be fed)\b/ },
  { name: 'burn_on_purpose', kind: 'self_harm', confidence: 0.85,
    pattern: /\b(?:poured|pour|pouring|held|hold|holding|pressed|press|pressing|put|putting) (?:\w+ ){0,3}(?:on|onto|against|over|under|to) my (?:hands?|arms?|legs?|skin|wrists?|thighs?|stomach)\b.{0,200}\b(?:on purpose|deliberately|intentionally|because i deserved|to punish|to feel)\b/ },
  // Round 12 (the second blind set, once measured): community shorthand, lethality asked for oneself,
  // and self-harm by means the earlier rules did not name.
  { name: 'shorthand', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:ctb|sewerslide|sewer slide|self[- ]delete|self[- ]deleting)\b/ },
  { name: 'sh_shorthand', kind: 'self_harm', confidence: 0.85,
    pattern: /\bsh (?:again|urges?|relapse|relapsed|scars?|cuts?|tonight)\b/ },
  { name: 'lethal_for_me', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\blethal (?:dose|amount|quantity)\b.{0,200}\b(?:i weigh|for me|for myself|my weight|i am \d+ ?kg|someone who weighs|i have (?:two|three|\d+|a few|enough) (?:boxes|bottles|packs|packets))\b|\b(?:painless|quick|peaceful|lethal|drown|die)\b.{0,200}\basking for (?:me|myself)\b|\bhow (?:long|much) (?:does it take|would it take) to (?:drown|die|bleed out|suffocate)\b.{0,200}\bi am (?:standing|sitting|here|at|by|on) /,
    unless: /\basking for (?:me|myself),? (?:lol|haha|jk)\b/ },
  { name: 'be_gone', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:i will|ill) (?:finally )?be gone(?=\s*(?:[.!?,;]|$|soon\b|forever\b|for good\b))/ },
  { name: 'accident_welcome', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\bif i (?:got|get|was|were) (?:hit|run over|killed) by (?:a |the )?(?:bus|car|truck|train|lorry)\b.{0,200}\b(?:relieved|relief|would not (?:even )?(?:try to )?(?:move|care|mind)|fine with (?:it|that))\b/ },
  { name: 'ingest_to_hurt', kind: 'self_harm', confidence: 0.9,
    pattern: /\b(?:drank|drink|drinking|swallowed|swallow|swallowing) (?:some |a (?:bit|cup|glass|capful) of )?(?:bleach|detergent|drain cleaner|antifreeze|broken glass|batteries|rat poison|laundry pods?)\b/,
    unless: /\b(?:as an insult|an insult|why do people (?:tell|say)|people (?:tell|say) to|comment section|meme)\b/ },
  { name: 'wound_self', kind: 'self_harm', confidence: 0.85,
    pattern: anyOf(
      /\b(?:punch|punched|punching|hit|hitting) (?:the |a )?(?:wall|door|mirror)\b.{0,200}\b(?:until|kept going until|till) my (?:knuckles|hands?|fists?) (?:cracked|bled|broke|bleed|break|bruised|split)\b|\b(?:bite|biting|bit|pinch|pinching|pinched)(?: and (?:bite|biting|pinch|pinching|scratch|scratching))? my (?:arms?|hands?|wrists?|thighs?)\b.{0,200}\b(?:marks?|bleed|bled|bruises?|hard|until)\b|\b(?:pull|pulled|pulling|rip|ripped|ripping|tore|tearing) (?:out )?(?:\w+ ){0,4}my hair\b.{0,200}\b(?:deserved?|punish|to hurt|to feel)\b|\bdeserved? to (?:hurt|suffer|feel pain|bleed)\b|\b(?:my |the )?cuts (?:are|were|got|keep getting) (?:deeper|worse|bigger)\b|\bhid(?:e|ing) (?:the |my |these )?(?:fresh |new )?(?:cuts|burns) on my\b|\bhid(?:e|ing) (?:the |my |these )?(?:fresh|new) (?:cuts|burns|marks)\b/,
      /\b(?:punch|punched|punching|hit|hitting) (?:the |a )?(?:wall|door|mirror|window)\b.{0,200}\b(?:on purpose|so my (?:knuckles|hands?|fists?) (?:would|will|could) (?:split|break|bleed|crack))\b/) },
  // Round 13 (the third blind set, once measured): passive wishes, means described rather than named,
  // lethality in everyday words, and non-native phrasing.
  { name: 'fine_if_gone', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:would be|is|be) (?:fine|okay|ok|alright|nice|better|a relief|peaceful) if i (?:did not|never|do not|would not) (?:wake up|make it|come back)\b|\b(?:waiting|wait) (?:until|till|for) (?:my (?:\w+ )?(?:cat|dog|pet|mom|mum|dad|parents?|grandma|grandpa|nan)|she|he|they) (?:passes|dies|is gone|goes)\b.{0,200}\b(?:free to go|can go|i can leave|my turn|i will go|go too)\b/ },
  { name: 'nerve_to', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:nerve|courage|guts) to (?:step off|jump|do it|go through with it|end it|pull the trigger|let go)\b(?! (?:in|into|on|at|with|and ask|ask)\b)/ },
  { name: 'fatal_enough', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:high|tall|far|deep|strong) enough to (?:definitely )?(?:die|kill (?:me|myself)|be fatal|not survive)\b|\b(?:way|ways|how) to (?:die|kill myself|end it)\b.{0,200}\b(?:looks?|seems?) like an accident\b/ },
  { name: 'finish_my_life', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:finish|finishing|stop|stopping) my (?:own )?life\b(?! (?:is|story|work|goals?|plans?)\b)/ },
  { name: 'waiting_for_train', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:stand|standing|wait|waiting|sit|sitting) (?:near|on|by|at) the (?:tracks|rails|railway line|train tracks)\b.{0,200}\bwait(?:ing)? for (?:it|the train)\b/ },
  { name: 'swerve_urge', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:swerve|swerving|steer|steering|drive|driving) into (?:a |the |an )?(?:oncoming )?(?:truck|lorry|bus|tree|wall|barrier|traffic)\b.{0,200}\b(?:hard not to|on purpose|almost did|tempted)\b|\b(?:letting go of|let go of) the (?:steering )?wheel\b.{0,200}\b(?:swerv|crash|into (?:a|the) (?:truck|tree|wall))/ },
  { name: 'ligature_test', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:tied|tie|tying|hung|hang|hanging) (?:a |the |my )?(?:belt|rope|cord|scarf|sheet|cable|noose)\b.{0,200}\b(?:hold my weight|around my neck)\b/ },
  { name: 'unalive_thoughts', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\bunalive (?:thoughts|ideation|urges)\b/ },
  // Round 14 (the fourth blind set, once measured): means and places described, concealment, and wishes
  // put in everyday words.
  { name: 'not_for_what_i_said', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:rope|pills|gun|blade|razor|noose|charcoal)\b.{0,200}\b(?:it is|its|they are|that is) not (?:really |actually )?for\b/ },
  { name: 'easy_to_do', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:would be|is) (?:so )?(?:easy|simple|tempting) to (?:swerve|drive into|step off|step in front|crash|let go of the wheel|end it|take them all|do it)\b|\b(?:train|platform|tracks|edge|bridge|roof|ledge|pills|gun|rope)\b.{0,200}\bhow (?:quick|fast|easy|painless) it would be\b|\b(?:almost|nearly) did not step back\b/ },
  { name: 'on_purpose_unnoticed', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:tell|know|find out|figure out) if (?:an? |the |my )?(?:overdose|death|crash|fall) (?:was|is) (?:on purpose|deliberate|intentional)\b|\b(?:exhaust|car|engine|charcoal|generator)\b.{0,200}\b(?:closed|shut|sealed) (?:garage|room|car)\b.{0,200}\b(?:work|how long|painless|quick)\b/ },
  { name: 'walk_in', kind: 'suicidal_intent', confidence: 0.8,
    unless: ONE_MORE,
    pattern: anyOf(
      /\b(?:thinking about|think about|going to|want to) walk(?:ing)? in(?:to (?:the|it) \w+)?(?=\s*(?:[.!?,;]|$|tonight\b|and\b))/,
      /\bwalk(?:ing)? in(?:to it| tonight| today)?\b.{0,200}\bnot (?:coming|come) back\b/) },
  { name: 'means_laid_out', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:pills|tablets|meds) (?:are |is )?(?:all |already )*(?:lined up|counted out|laid out) (?:on|in|next to|beside) my\b/ },
  { name: 'hide_marks', kind: 'self_harm', confidence: 0.8,
    pattern: /\b(?:hide|hiding|cover|covering|cover up) (?:the |my |these |fresh |new )*(?:scratches|cuts|burns) on my (?:arms?|forearms?|wrists?|thighs?|legs?|stomach|hips?|ankles?)\b/ },
  { name: 'punish_by_starving', kind: 'self_harm', confidence: 0.8,
    pattern: /\b(?:starve|starving) my ?self\b.{0,200}\b(?:as (?:a )?punishment|to punish)\b|\bmake my ?self throw up\b.{0,200}\b(?:as (?:a )?punishment|to punish)\b/ },
  // Round 15 (the fifth blind set, once measured): heights and trains described by their details, doses
  // and means asked about for oneself, self-harm by act or object, and plans told to a bot.
  { name: 'edge_details', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:bridge|ledge|roof|rooftop|top floor|parking garage|car park|cliff|balcony|overpass)\b.{0,200}\b(?:(?:decide|deciding|decided) (?:whether|if) (?:or not )?to (?:go over(?=\s*(?:[.!?,;]|$|the (?:edge|side|rail|railing)\b))|jump|step off|let go)|(?:no|without a|has no) (?:fence|railing|barrier|net)\b.{0,200}\bi know\b|i know (?:exactly )?which (?:corner|side|spot|part) has no (?:fence|railing|barrier|net))/ },
  { name: 'train_timetable', kind: 'suicidal_intent', confidence: 0.75,
    pattern: /\b(?:express|freight|fast|non-stop|nonstop) train\b.{0,200}\bdoes not stop\b.{0,200}\bi know (?:exactly )?(?:what|which) time it (?:passes|comes through|goes through)\b/ },
  { name: 'holds_my_weight', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:rope|beam|belt|cord|cable|noose|hook|rail)\b.{0,200}\b(?:hold|support|take) (?:someone|somebody|a person|a grown man|a grown woman|me) (?:of |at )?(?:my|your|that) (?:weight|size)\b/,
    unless: /\b(?:climb|climbing|hammock|swing|tree ?house|zip ?line|pull-?ups?|gym|boat|tow|towing|rappel|abseil|belay|tire|tyre)\w*\b/ },
  { name: 'dose_would_do_it', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\bhow (?:much|many) (?:of (?:my|the|her|his) )?(?:insulin|pills|tablets|paracetamol|tylenol|acetaminophen|sleeping pills|morphine|oxy\w*|fentanyl|heroin|medication|meds|potassium|antifreeze|painkillers|benzos|xanax) (?:would|will|it would take to|it takes to) do it\b|\b(?:what|wat|wht) happens if (?:you|i|someone|a person) (?:take|took|swallow|swallowed|down|downed) (?:like |about |around |over )?(?:[1-9]\d|a hundred)\d* (?:\w+ )?(?:pills|tablets|tylenol|paracetamol|advil|ibuprofen|aspirin|sleeping pills|benadryl|xanax|melatonin)\b/ },
  { name: 'accident_for_insurance', kind: 'suicidal_intent', confidence: 0.85,
    unless: /\b(?:novel|story|character|plot|game|book|fiction|screenplay|villain|murder mystery)\b/,
    pattern: /\blook like an accident\b.{0,200}\b(?:insurance|on purpose|i did it|my family)\b|\b(?:insurance|life insurance)\b.{0,200}\b(?:make|made|making) it look like an accident\b|\b(?:insurance|life insurance)(?: money| payout)?\b.{0,200}\bthan (?:with )?me (?:around|here|alive)\b|\b(?:happier|better off) with (?:the )?(?:insurance|life insurance)(?: money| payout)? than with me\b/ },
  { name: 'want_it_quick', kind: 'suicidal_intent', confidence: 0.8,
    // the rare phrase is matched first, the means looked for behind it (a text of repeated means words stays cheap)
    pattern: /\bi (?:want|need) it to be (?:quick|painless|fast|peaceful)\b(?<=\b(?:gas|fumes|pills|rope|jump|fall|drown|overdose|blade|gun|lethal|toxic|poison)\b.{0,240})/ },
  { name: 'talk_me_out', kind: 'suicidal_intent', confidence: 0.8,
    pattern: /\b(?:do not|do not even) (?:try to )?talk me out of it\b(?<=\b(?:swallow|swallowing|jump|end it|pills|overdose|kill|die|bridge|rope|gun|blade|medicine cabinet)\b.{0,240})/ },
  { name: 'medicine_cabinet', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:swallow|swallowing|take|taking|down|downing) (?:everything|all|whatever is|every pill) (?:in|from) (?:the|my|our) (?:medicine cabinet|cabinet|first aid kit|bathroom cabinet)\b/ },
  { name: 'reckless_hoping', kind: 'suicidal_intent', confidence: 0.75,
    pattern: /\b(?:without (?:my |a )?seat ?belt|way too fast|run(?:ning)? red lights?)\b.{0,200}\bhoping (?:something|i|it|a \w+|someone) (?:finally |bad )?(?:happens|crash|die|get hit|hits me|kills me)\b/ },
  { name: 'deeper_cut', kind: 'self_harm', confidence: 0.9,
    pattern: /\bhow deep (?:can|should|do|could) (?:you|i|someone) cut\b.{0,200}\b(?:stitches|bleed|bleeding|vein|skin|scar|er|hospital|wrist|arm|thigh)\b|\bcut deeper than (?:last time|before|ever)\b|\b(?:cut|cutting|blade|razor)\b.{0,200}\bgo deeper than (?:last time|before)\b/ },
  { name: 'relapse_with_means', kind: 'self_harm', confidence: 0.85,
    pattern: /\brelapsed?\b.{0,200}\b(?:blade|razor|cut myself|cutting myself|burned myself|burnt myself|cuts on my)\b|\b(?:blade|razor|glass)\b.{0,200}\bon my (?:stomach|arms?|wrists?|thighs?|legs?|hips?|skin)\b.{0,200}\b(?:no one will see|nobody will see|so no one|so nobody|to hide|on purpose|this time|told (?:my )?\w+ i (?:slipped|fell|tripped))\b|\bused (?:a )?(?:piece|shard|bit) of (?:the )?(?:glass|mirror|blade|razor)\b.{0,200}\bon my (?:stomach|arms?|wrists?|thighs?|legs?|hips?|skin)\b/ },
  { name: 'harm_for_relief', kind: 'self_harm', confidence: 0.85,
    pattern: /\b(?:bite|biting|pull|pulling|scratch|scratching|pick|picking|hit|hitting|bang|banging|punch|punching)\b.{0,200}\b(?:until|till) (?:it|they|i) (?:bleeds?|bled|throbs?|bruises?)\b.{0,200}\b(?:on purpose|only thing|make (?:it|the \w+) stop|makes? (?:it|the \w+(?: in my head)?) stop|whenever i mess up|deserve)\b|\bbang(?:ing)? my head against the wall (?:until|till) it (?:throbs|bleeds|hurts|bruises)\b/ },
  // Round 17 (the seventh blind set, once measured as held-out): lives told in their own words: a weapon
  // kept close, an overdose already taken, medication stopped to die, non-native phrasings of not living.
  { name: 'weapon_close', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\bmy (?:gun|shotgun|rifle|pistol|sidearm|revolver|handgun|firearm|service weapon) (?:in my (?:lap|mouth)|to my (?:head|temple|chin))\b|\b(?:gun|shotgun|rifle|pistol|sidearm|revolver|handgun|firearm|rope|pills)\b.{0,200}\b(?:told|telling|tell) myself (?:it is|its|they are) (?:only )?for (?:the )?\w+\b.{0,60}\bnot sure (?:it is|they are|that is)\b/ },
  { name: 'overdose_taken', kind: 'suicidal_intent', confidence: 0.9,
    unless: /\b(?:a day|per day|each day|every day|daily|over the (?:day|week)|as prescribed|prescribed|vitamins?|gummies|probiotics?)\b/,
    pattern: /\bi (?:took|swallowed|have taken|downed|ate) (?:about |around |over |maybe |like )?(?:[5-9]|[1-9]\d|[1-9]\d\d|five|six|seven|eight|nine|ten|twelve|fifteen|twenty|thirty|forty|fifty) (?:of )?(?:my |the |my \w+ |her |his |their )?(?:\w+ )?(?:pills|tablets|capsules|sleeping pills|painkillers|meds)\b.{0,160}\b(?:ago|feel|feeling|dizzy|weird|sleepy|numb|throw(?:ing)? up|heart|is that bad|will i be|what happens|should i)\b/ },
  { name: 'stopped_treatment_to_die', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:stopped|quit|stop|am not|have not been) taking my (?:\w+ )?(?:medication|medicine|meds|pills|insulin|tablets)\b.{0,200}\b(?:do the job|finish me|kill me|take me|end it|so (?:that )?i (?:will )?die|let (?:it|nature) take)\b/ },
  { name: 'better_not_living', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:is|it is|would be) (?:better|best) (?:if |that )?i (?:am|was|were|would be|be) (?:not (?:living|alive)|no more living|dead)(?: anymore)?\b(?! (?:when|while|during|for the|at the)\b)/ },
  // Round 18 (the eighth blind set, once measured as held-out): a hold tested, a partner taken along,
  // and a goodbye posted with a weapon by someone else.
  { name: 'tested_hold', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\btied (?:something|a (?:belt|rope|cord|scarf|sheet|cable|tie)|it) (?:to|around|on) (?:the|a|my) (?:closet rail|clothes rail|rail|beam|door|doorknob|door handle|banister|ceiling|pipe|hook|bunk|bed frame)\b.{0,200}\b(?:hold|held|holds)\b/ },
  { name: 'take_us_both', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\b(?:take|taking) (?:us|them) both\b(?! (?:to|out|home|for|on|in|there|along|back|with|shopping|camping|fishing)\b)|\b(?:take|taking) (?:the kids|my kids|the children|my children|my son|my daughter) with me\b(?! (?:to|on|when|for|in|out|shopping|camping|fishing)\b)/ },
  // the plans stop on a named day: "after wed there's nothing to plan for"
  { name: 'nothing_to_plan', kind: 'suicidal_intent', confidence: 0.75,
    pattern: /\bafter (?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day)?\b,? (?:there is|it is|there will be) nothing (?:left )?to (?:plan|schedule)(?: for)?\b|\bafter (?:tonight|today|tomorrow|this week|that day)\b,? (?:there is|it is|there will be) nothing (?:left )?to (?:plan|schedule)(?: for)?\b/ },
  // Round 19 (the ninth blind set, once measured as held-out): a dose known and the means brought home,
  // a weapon loaded and left out, someone who "won't need it where she's going".
  { name: 'dose_known', kind: 'suicidal_intent', confidence: 0.85,
    pattern: /\bknow (?:exactly )?(?:what|which|how much|how many) (?:\w+ )?(?:dose|amount|pills|units|vials?|mg|milligrams) (?:would|will|it would take to|it takes to) do it\b/ },
  // someone else in danger: the user needs help helping them
  { name: 'third_party', kind: 'third_party', confidence: 0.85,
    pattern: /\b(?:talks?|talking|talked|thinks?|thinking|thought|posting|posted|writes|writing|wrote) about (?:killing|hurting|harming|cutting|ending) (?:himself|herself|themselves|themself|his (?:own )?life|her (?:own )?life|their (?:own )?life)\b|\b(?:wants|want|wanted|going|trying|tried|threatening|threatened|planning|plans|talks about|talking about|talked about|said (?:he|she|they) (?:would|will|wants? to|is going to)) (?:to )?(?:kill|hurt|harm|cut|end) (?:himself|herself|themselves|themself|his (?:own )?life|her (?:own )?life|their (?:own )?life)\b|\b(?:he|she|they|my \w+) (?:is|are|was|were|seems?|seemed|has been|have been) (?:cutting|hurting|harming|burning|hitting|starving|scratching) (?:himself|herself|themselves)\b|\b(?:going|wants?|planning|plans|trying|tried|threatening|threatened) to take (?:his|her|their) (?:own )?life\b(?! (?:back|in|into|to|seriously|forward|more|by|one|day|a)\b)|\b(?:he|she|they) (?:does not|do not|did not|no longer) (?:want|wants) to (?:live|be alive|exist|be here|go on|wake up)\b(?! (?:in|with|at|near|on|there|here|abroad|alone|together|through|next|until)\b)|\b(?:he|she|they) (?:wants?|wanted|wishes|wished) (?:to die|to be dead|(?:he|she|they) (?:was|were) dead)\b|\b(?:he|she|they) (?:just )?(?:took|swallowed|has taken|have taken|drank) (?:a whole bottle|all (?:of )?(?:her|his|their) (?:pills|meds)|a bunch of pills|too many pills|an overdose)\b|\b(?:she|he|they) (?:just )?(?:took|swallowed|has taken|have taken) (?:a bunch|a handful|a lot|loads|most|all) of (?:her|his|their) (?:pills|meds|tablets|medication)\b|\b(?:posted|texted|sent|wrote) (?:on (?:her|his|their) \w+ )?(?:\w+ ){0,4}['"]?goodbye\b.{0,200}\b(?:pills|not answering|will not answer|cannot reach|locked (?:herself|himself|themselves))\b|\b(?:giving|gave) away (?:all )?(?:of )?(?:her|his|their) (?:stuff|things|belongings)\b.{0,200}\b(?:will not matter|locked (?:herself|himself|themselves)|not answering|will not answer)\b|\bmade (?:his|her|their) peace\b.{0,200}\b(?:gave|giving|given) (?:away |(?:his|her|their) \w+ )|\b(?:will not|does not|do not) need (?:it|them|this|that|any of (?:it|them)) where (?:she is|he is|they are|she's|he's|they're) going\b.{0,200}\b(?:giving|gave|given) away\b|\b(?:giving|gave|given) away (?:her|his|their) \w+.{0,200}\b(?:will not|does not|do not) need (?:it|them|this|that|any of (?:it|them)) where (?:she is|he is|they are|she's|he's|they're) going\b|\bposted (?:a (?:pic|picture|photo|video|story) of )?(?:a |his |her |their )?(?:gun|pistol|rifle|pills|rope|bridge|razor)\b.{0,200}\b(?:see you never|goodbye|bye forever|last post|location off|not answering|will not answer|turned (?:his|her|their) (?:phone|location) off)\b|\b(?:gave|giving|given) (?:away |(?:his|her|their) \w+ ).{0,200}\bmade (?:his|her|their) peace\b|\b(?:talking|talks|talked|says|said|saying|keeps saying) (?:about )?['\"]?not (?:being|be) (?:here|around|alive) (?:next|much|by|after|for)\b.{0,200}\b(?:look after|take care of|keep|have) (?:her|his|their) (?:plants|cat|dog|pets?|kids|fish|bird) (?:indefinitely|forever|permanently|for good)\b/ },
];

/**
 * Tier 3: phrasings that are a crisis when the text reads as distressed ("I'm standing on the bridge
 * right now", "I have the razor blade in my hand") and ordinary otherwise ("standing on the bridge
 * watching the boats"). They count only with negative affect from the emotion model.
 */
const CONTEXTUAL: readonly Rule[] = [
  { name: 'means_at_hand', kind: 'suicidal_intent', confidence: 0.75,
    pattern: /\b(?:have|holding|hold|got|bought|found|staring at|looking at)(?: the| a| my| some)? (?:razor(?: blade)?|blade|rope|noose|gun|pills|bottle of pills|sleeping pills)\b.{0,200}\b(?:in my hand|ready|lined up|next to me|in front of me|with me|right here|tonight|today|now)\b|\b(?:pills|tablets|meds) (?:are |is )?(?:all |already )*(?:lined up|counted out|ready|laid out)\b|\bswallow (?:every|all the|all of the|all my|the whole) (?:pill|pills|tablets|bottle)\b/ },
  { name: 'at_the_edge', kind: 'suicidal_intent', confidence: 0.75,
    pattern: /\b(?:standing|sitting|stood|am|i am) (?:on|at) (?:the|a|this) (?:edge|ledge|bridge|roof|rooftop|tracks|railway|cliff|balcony railing)\b.{0,200}\b(?:right now|now|tonight|alone|again)\b/ },
  { name: 'going_to_jump', kind: 'suicidal_intent', confidence: 0.7,
    pattern: /\b(?:going to|want to|ready to|about to|tempted to|planning to|urge to|will|(?:thinking|thought) (?:about|of)) jump(?:ing)?\b(?! (?:in|into|on|onto|at|up|ahead|the gun|ship|rope|start|for|around|over|through|back|off (?:the|a) (?:dock|diving|high|board|pier|boat))\b)/ },
  { name: 'goodbye_letters', kind: 'suicidal_intent', confidence: 0.75,
    unless: /\b(?:coworkers|co-workers|colleagues|team|class|classmates|students|neighbou?rs)\b.{0,200}\blast day\b|\blast day\b.{0,200}\b(?:at (?:the|my) (?:company|job|office|school)|after \d+ years)\b|\bgoodbye (?:messages?|cards?|notes?|speech) (?:for|to) (?:a|my|our|the) (?:\w+ )?(?:coworker|co-worker|colleague|boss|manager|teacher|team|class|neighbou?r)s?\b/,
    pattern: /\bgoodbye (?:notes?|letters?|messages?|videos?|texts?)\b|\b(?:saying|say|said|text|texting|wrote|write|writing) (?:my )?goodbyes? to (?:everyone|everybody|all of you|you all|my (?:family|kids|children|parents|friends)|the world)\b/ },
  { name: 'go_for_good', kind: 'suicidal_intent', confidence: 0.7,
    pattern: /\b(?:time (?:for me )?to|ready to|going to|want to) (?:go|be gone|leave) (?:for good|forever|permanently)\b|\bbe gone (?:for good|forever)\b/ },
  { name: 'end_suffering_plain', kind: 'suicidal_intent', confidence: 0.7,
    pattern: /\b(?:want|need|going|ready|wish) to end (?:my|this|the|all (?:my|this|the)) (?:suffering|pain|misery|torment)\b/ },
  { name: 'thinking_of_dying', kind: 'suicidal_intent', confidence: 0.7,
    pattern: /\b(?:thinking|thought|thoughts|think) (?:about|of) (?:dying|death|being dead|not being here|not being alive|not existing)\b/ },
  { name: 'own_funeral', kind: 'suicidal_intent', confidence: 0.7,
    pattern: /\b(?:imagine|imagining|picture|picturing|think about|thinking about|dream about|dreaming about) my (?:own )?(?:funeral|death|grave)\b/ },
  { name: 'only_way_out', kind: 'suicidal_intent', confidence: 0.75,
    pattern: /\b(?:only|no other|the one|no) way (?:out|to (?:stop|end|escape) (?:the|this|my) (?:pain|suffering|hurt))\b.{0,200}\b(?:die|dying|death|dead|end it|suicide)\b|\b(?:die|dying|death|dead)\b.{0,200}\b(?:only|no other) (?:way|option|choice|escape)\b|\bway out (?:except|but|other than) (?:dying|death|to die|suicide)\b/ },
  { name: 'death_relief', kind: 'suicidal_intent', confidence: 0.7,
    pattern: /\b(?:death|dying|being dead|not waking up|not existing)\b.{0,200}\b(?:relief|peace|peaceful|better|easier|escape)\b|\b(?:relief|peace|escape)\b.{0,200}\b(?:to die|dying|death)\b/ },
  { name: 'do_it_alone', kind: 'suicidal_intent', confidence: 0.7,
    pattern: /\b(?:going to|will|plan to|planning to|decided to|ready to) do it\b.{0,200}\b(?:when|while|once|after) (?:everyone|everybody|they|no one|nobody|my (?:family|parents|wife|husband|partner|roommates?)) (?:is |are |has |have )?(?:away|gone|out|asleep|not home|left|at work)\b/ },
  { name: 'almost_jumped', kind: 'suicidal_intent', confidence: 0.7,
    pattern: /\b(?:almost|nearly) (?:jumped|did it|went through with it)\b(?! (?:out|for|at|up|in|into|over|the|on|when|because|as|from|off (?:the |my )?(?:couch|chair|sofa|bed|seat))\b)/ },
  { name: 'saving_pills', kind: 'suicidal_intent', confidence: 0.7,
    pattern: /\b(?:saving|saved|hoarding|hoarded|stashing|stashed) (?:up )?(?:all )?(?:my |the |some )?(?:\w+ )?(?:pills|meds|tablets|medication|painkillers|sleeping pills)\b/ },
  { name: 'go_through_with_it', kind: 'suicidal_intent', confidence: 0.7,
    pattern: /\b(?:tonight|today|tomorrow|this weekend|soon)\b.{0,200}\b(?:go|going) through with it\b|\b(?:go|going) through with it\b.{0,200}\b(?:tonight|today|tomorrow)\b/ },
  { name: 'method_question', kind: 'suicidal_intent', confidence: 0.7,
    pattern: /\bdoes (?:drowning|hanging|jumping|an overdose|overdosing|bleeding out|dying) hurt\b|\bis it painful to (?:drown|die|hang|bleed out|overdose)\b|\blethal (?:dose|amount)\b|\bhow (?:long|much) (?:does it take|would it take) to (?:drown|die|bleed out|suffocate)\b|\b(?:is it|would it be) (?:painless|quick|peaceful) to\b|\bis (?:drowning|hanging|jumping|bleeding out|an overdose|overdosing|suffocating|freezing to death|carbon monoxide) (?:painless|painful|quick|peaceful)\b(?! for\b)|\b(?:hurts?|painful|painless|survive|quick)\b.{0,200}\bfall(?:ing)? (?:from|off) (?:the |a )?(?:\d+\w* floor|top floor|roof|bridge|building|balcony|window|cliff)\b/,
    unless: /\blethal (?:dose|amount) of (?:caffeine|coffee|energy drinks?|vitamin \w+|water|salt|chocolate)\b/ },
  { name: 'suicide_mentioned', kind: 'suicidal_intent', confidence: 0.7,
    pattern: /\bsuicide\b(?!.{0,200}\b(?:prevention|squad|mission|rate|rates|awareness|research|statistics|hotline number|bomb|bomber|documentary|movie|film|novel|book|song|lyrics|play|character|scene|show|series|season|law|legal|exam|deterrent|net|nets|barrier|barriers|fence)\b)/,
    // someone else's death spoken of, a title, a class or a law question
    unless: anyOf(SAFE_PLACE, /\b(?:book|novel|article|essay|paper|thesis|documentary|film|movie|lecture|podcast|class|course|history|study|research|speech|poem|play|scene|chapter|story|soliloquy|theory|theories) (?:about|on|of|into)\b|\b(?:songs?|titles?|albums?|lyrics|band|episode|theme song|character|characters|protagonist)\b|\bfor my (?:essay|class|paper|thesis|course|homework|assignment|exam|novel|story|book)\b|\bstudying for (?:my |the |our )?(?:boards|board exams?|exams?|finals|midterms?|tests?|nclex|usmle|mcat)\b|\b(?:speech|poem|play|book|song|novel|film|movie|story|scene|soliloquy) (?:is|was) (?:about|on)\b|\bwhat did (?:the )?(?:research|studies|study) find\b|\bsuicide contagion\b|\b(?:ruled|ruling) (?:it )?(?:a |as a |as )?suicide\b|\bmedia guidelines\b|\breporting (?:it |on it |on suicide )?responsibly\b|\b(?:teacher|professor|lecturer|tutor|textbook) (?:says|said|thinks|argues) (?:that )?(?:it is|its|it was) about suicide\b|\b(?:hamlet|shakespeare|to be or not to be)\b|\b(?:\w+'s|his|her|their) suicide\b|\bdifference between suicide\b/) },
];
/** The third tier less the rule on the bare topic word, for French text that speaks of "suicide" (FRENCH_TOPIC). */
const CONTEXTUAL_BUT_TOPIC = CONTEXTUAL.filter((r) => r.name !== 'suicide_mentioned');

/** A day or night named as the one: "friday is the day", "tonight I'm going to do it". */
const WHEN = '(?:tonight|today|tomorrow|friday|saturday|sunday|monday|tuesday|wednesday|thursday|this weekend)';

/** Warning signs that are too common to decide alone; two of them together do. */
const SOFT: readonly { name: string; pattern: RegExp }[] = [
  { name: 'cannot_take_it', pattern: /\bcannot (?:take|handle|do|bear|stand) (?:it|this|any of this|life)(?: anymore| any more| any longer)\b|\bi cannot anymore\b/ },
  { name: 'burden', pattern: /\b(?:i am|i feel like|feel like i am|i have become) (?:such |just |only )?(?:a|nothing but a) burden\b|\b(?:i am|i feel like) (?:just |only )?dead weight\b/ },
  { name: 'hopeless', pattern: /\b(?:hopeless|no hope|no way out|trapped forever|nothing will ever get better|never get better|worthless)\b/ },
  { name: 'give_up', pattern: /\b(?:i give up|giving up on everything|i am giving up)\b/ },
  { name: 'alone_forever', pattern: /\b(?:nobody|no one) (?:cares|would care|loves me|needs me)\b/ },
  { name: 'not_around', pattern: /\b(?:will not|not going to|may not|might not) be (?:around|here) (?:much longer|anymore|for long|tomorrow|after (?:that|then|tonight|this week|friday|saturday|sunday|monday|tuesday|wednesday|thursday))\b/ },
  { name: 'something_will_happen', pattern: /\bsomething (?:is going to|will|is about to) happen to me\b/ },
  { name: 'remembered', pattern: /\b(?:want|hope|so) (?:people|everyone|everybody|they|my \w+) (?:to )?remember me (?:looking|as|like|by)\b|\b(?:photo|picture|pic) for (?:my funeral|the funeral|my obituary|my memorial|after\b)/ },
  { name: 'accounts_deleted', pattern: /\b(?:delete|deleting|deleted|close|closing|closed) (?:all )?(?:of )?my (?:social media|accounts|socials|profiles)\b/ },
  { name: 'goodbye', pattern: /\b(?:goodbyes?|good byes?|farewells?)\b/ },
  { name: 'meaningless', pattern: /\b(?:life|my life|everything) (?:has no meaning|is meaningless|is pointless|means nothing)\b/ },
  { name: 'want_out', pattern: /\bi (?:just )?want (?:out|it to stop)(?=\s*(?:[.!?,;]|$))/ },
  { name: 'life_too_hard', pattern: /\b(?:living|life|being alive|existing) (?:is|feels) (?:too|so) (?:painful|hard|heavy|much)\b/ },
  { name: 'nothing_left', pattern: /\bnothing (?:left )?(?:for me|to look forward to)\b|\bnothing left\b/ },
  { name: 'want_to_go', pattern: /\bi (?:want|need|am ready) to go(?=\s*(?:[.!?,;]|$))/ },
  { name: 'finished', pattern: /\bi am (?:finished|done for|done)(?=\s*(?:[.!?,;]|$))/ },
  { name: 'will', pattern: /\b(?:writing|wrote|write|made|making|updated|updating|finished) (?:my|a) (?:will|testament)\b/ },
  { name: 'giving_away', pattern: /\b(?:gave|giving|give) away (?:all )?(?:of )?my (?:stuff|things|belongings|possessions|guitar|books|clothes|records|games|art)\b|\b(?:gave|giving|give|rehomed|rehoming|rehome) (?:away )?my (?:dog|cat|pets?|guitar|stuff|things|belongings|possessions|clothes|books) (?:away|to)\b/ },
  { name: 'note_left', pattern: /\b(?:wrote|written|left|leaving|writing) (?:a |my )?(?:note|letter)s? (?:for|to) (?:my )?(?:parents|family|mom|mum|dad|kids|children|wife|husband|partner|sister|brother|friends)\b/ },
  { name: 'the_night', pattern: new RegExp(`\\b${WHEN}(?: is|'s) the (?:night|day)\\b|\\b(?:today|tonight|tomorrow) is my last (?:day|night)(?=\\s*(?:[.!?,;]|$|and\\b|i decided\\b))`) },
  { name: 'decided', pattern: /\bi (?:have )?(?:decided|made up my mind)(?=\s*(?:[.!?,;]|$))/ },
  { name: 'after_gone', pattern: /\b(?:after|when|once|before) i am (?:gone|dead|not here)\b|\bbefore i (?:go|leave|die)(?=\s*(?:[.!?,;]|$))/ },
  { name: 'affairs_in_order', pattern: /\b(?:wrote down|left|leaving|writing down) (?:all )?my passwords\b|\bcancell?(?:ed|ing) my (?:phone|contracts?|subscriptions?|lease|gym membership)\b|\b(?:gave|giving) (?:all )?my \w+ (?:and my \w+ )?to (?:my |a )?\w+\b.{0,200}\b(?:over|peaceful|settled|ready|before i)\b|\bpaid off (?:the|my) (?:credit card|debts?|loans?)\b|\b(?:everything|all) (?:is|has been) (?:settled|sorted|taken care of|in order)\b|\bnothing left (?:for me )?to (?:sort out|arrange|do)\b/ },
  { name: 'found_after', pattern: /\bwhere (?:they|she|he|someone) (?:will|would|can|could) find (?:it|them|me)\b|\bfind (?:it|them|me) after(?=\s*(?:[.!?,;]|$))/ },
  { name: 'farewell_words', pattern: /\bsorry for everything\b|\b(?:you have been|you've been|you were) (?:kinder|nicer|better) (?:to me )?than (?:most people|anyone|everyone|most humans)\b|\byou (?:were|have been) (?:a |the )?(?:good|great|best|true|real) (?:friend|person|mom|mum|dad|brother|sister)\b/ },
  { name: 'do_it_now', pattern: new RegExp(`\\b${WHEN} i am (?:finally )?going to do it\\b`) },
  { name: 'almost_over', pattern: /\b(?:it is|its|it will be|everything is|it will all be) (?:almost|nearly|finally|soon) over\b/ },
  { name: 'if_gone', pattern: /\bif i (?:disappear|die|am gone|was gone|were gone|was not here|were not here|do not come back|do not make it)(?: tomorrow| tonight| soon)?\b/ },
  { name: 'how_to_do_it', pattern: /\b(?:thought|thinking|think) (?:a lot )?about how (?:i would|i could|to|i will|i am going to|i might) do it\b/ },
  { name: 'not_needing', pattern: /\b(?:will not|am not going to) be needing (?:them|it|these|those|my \w+)(?=\s*(?:[.!?,;]|$|anymore\b))|\bafter (?:tonight|today|this weekend)\b.{0,200}\bwill not (?:be needing|need)\b|\bwill not (?:be needing|need) (?:you|this|it|them|anything|anyone)(?: anymore)? after (?:tonight|today|tomorrow|this weekend)\b/ },
  { name: 'not_their_fault', pattern: /\b(?:it|this) (?:was not|is not) (?:her|his|their|your|anyone's|anybody's) fault\b/ },
  { name: 'if_found', pattern: /\bif (?:anyone|someone|you) (?:finds|find|reads|read) this\b|\bto whoever (?:reads|finds) this\b/ },
  { name: 'house_to_myself', pattern: /\b(?:when|while|once) (?:everyone|everybody|they|my (?:family|parents|wife|husband|roommates?|partner)) (?:is|are) (?:away|out|gone|at (?:the |a )?\w+)\b.{0,200}\b(?:have|having) the (?:house|place|apartment|flat) to myself\b/ },
  { name: 'thanks_for_listening', pattern: /\bthanks? (?:you )?for (?:always )?(?:listening|being there)(?: to me| for me)?(?=\s*(?:[.!?,;]|$))/ },
  { name: 'scheduled_messages', pattern: /\bscheduled (?:the |my |some )?(?:emails?|messages?|texts?|posts?|letters?) to (?:go out|be sent|send)\b/ },
  { name: 'weapon_out', pattern: /\bloaded (?:it|my (?:gun|pistol|rifle|shotgun|revolver|handgun|service pistol|service weapon))\b.{0,80}\b(?:sitting|lying|left it|is) (?:on|next to|beside|in front of)\b/ },
  { name: 'refuses_help', pattern: /\bi do not (?:want|need) (?:the |a |any )?(?:crisis line|hotline|helpline|lecture|therapy speech)\b|\bdo not tell me to call (?:anyone|a hotline|the hotline|a helpline|988)\b/ },
  { name: 'someone_to_know', pattern: /\bi (?:just )?(?:need|want|wanted) (?:someone|somebody|you) to know(?=\s*(?:[.!?,;]|$))/ },
  { name: 'pet_rehomed', pattern: /\bfound (?:someone|somebody|a (?:new )?home) (?:to take|for) my (?:cat|dog|pets?|bird|rabbit)\b|\bmy (?:cat|dog|pets?|bird|rabbit) gets? rehomed\b|\bwho (?:would|will|could|can) take (?:a |my )?(?:\d+ (?:year|yr) old )?(?:\w+ )?(?:dog|cat|beagle|puppy|kitten|rabbit|bird|lab|terrier)\b/ },
  { name: 'last_message', pattern: /\b(?:this is|it is) my (?:last|final) (?:message|post|text|words|time (?:talking|writing))\b/ },
  { name: 'final_words', pattern: /\btell (?:my \w+|them|everyone|everybody|her|him|mom|mum|dad) (?:that )?i (?:am sorry|love (?:him|her|them|you)|loved (?:him|her|them|you))\b/ },
];

/**
 * Tier 2, co-occurrence: in one clause, words of dying together with words of wanting it ("I keep
 * wishing I would die in my sleep", "if I died tomorrow it would be a relief", "each day I feel more
 * like dying"), unless the clause is one of the idioms that borrow those words.
 */
const DEATH = /\b(?:die|dying|died|dead|death|suicide|kill(?:ing)? myself|not (?:going to )?(?:be |being )?alive|no longer (?:be )?(?:alive|here|around)|not (?:going to )?be (?:here|around) (?:much longer|anymore|for long)|(?:not|never) (?:have )?(?:wake|woken|waking|wakes) up|sleep forever|cannot see myself (?:being )?(?:alive|living|making it)|end (?:it|it all|my life)|ending (?:it|it all|my life))\b/;
const WANTING = /\b(?:want|wants|wanted|wanting|wish|wishes|wishing|wished|hope|hoping|pray|praying|ready|decided|plan|planning|going to|urges?|tempted|feel (?:more |a lot )?like|long for|longing|crave|craving|relief|rather|all i think about|keep thinking|cannot stop thinking|deserve|better off|welcome|would be (?:easier|better|simpler|a relief|peaceful)|easier than)\b/;
const DEATH_IDIOMS = /\b(?:die|dying|died|dies) (?:for|of|from|if|when|before|after|laughing|inside|a little|to (?:see|meet|know|try|go|hear|get|find|tell)|trying)\b|\bdying to\b|\bto die for\b|\b(?:bored|scared|worried|frightened|freezing|starving|tired|sick|worked|loved) to death\b|\b(?:phone|battery|laptop|plant|plants|houseplant|car|engine|character|hero|villain|game|show|series|conversation|party|trend)s? (?:is |are |was |were |keeps? |kept |just )?(?:dying|dead|died|dies)\b|\bdead (?:serious|tired|end|line|wrong|set|ahead|silent|quiet|easy)\b|(?<!\bnot )\b(?:scared|afraid|fear|terrified|frightened) of (?:dying|death|being dead)\b|\bdeath of me\b|\bdeath warmed (?:over|up)\b|\bkill(?:ing)? myself laughing\b|\brather (?:die|be dead) (?:than|lol|lmao|haha|jk)\b|\bdeath (?:metal|star|valley|row)\b|\bsleep forever (?:after|this|tonight|on|in|until|till|when|because|once)\b|\bfeels? like (?:someone|somebody|something) (?:died|is dying|has died)\b/;
/** Ending a relationship or a chat, not a life: "I want to end it for good, like block him everywhere". */
const ENDING_CONTACT = /\bend (?:it|things)(?: for good| once and for all)?,? (?:like |by |and )?(?:block|blocking|unfollow|unfollowing|delete|deleting|cut(?:ting)? (?:him|her|them) off|ghost|ghosting)\b/;
const NOT_A_WISH = [DEATH_IDIOMS, HYPERBOLE, JOKING_DEATH, ENDING_CONTACT];
/**
 * The idioms above, cut out of what the learned signal reads: it learned words ("die", "take my life"),
 * not their idioms, and flagged "to die for" alone at 0.97 and "I want to take my life back" at 0.99
 * (docs/conversation-modes.md promises both are kept out).
 */
const IDIOM_SPANS = new RegExp(
  [...NOT_A_WISH.map((re) => re.source), `${TAKE_MY_LIFE} ${LIFE_IDIOM_TAIL}`].join('|'), 'g');

/**
 * Someone else's death, told as news or grief ("since my dad died", "after she passed away"): not a death
 * the writer wishes for, so the co-occurrence rule does not count it ("it's our first Christmas since my dad
 * died and my mum wants everything the same" read as a wish to die).
 */
const OTHERS_DEATH = /\b(?:(?:my|his|her|their|our|your) (?:[a-z']+ ){0,2}?|(?:he|she|they) )(?:has |had |have |just |recently )?(?:died|passed away)\b/g;

function deathWish(t: string): boolean {
  if (SAFE_PLACE.test(t)) return false;
  return t.split(/[.!?;]+|,\s*but\b/).some((clause) => {
    const own = clause.replace(OTHERS_DEATH, ' ');
    return DEATH.test(own) && WANTING.test(clause) && !NOT_A_WISH.some((re) => re.test(clause));
  });
}

const CONTRACTIONS: ReadonlyArray<[RegExp, string]> = [
  [APOSTROPHES, "'"],
  [/\bi'm\b|\bim\b/g, 'i am'],
  [/\bi've\b|\bive\b/g, 'i have'],
  [/\bi'll\b/g, 'i will'],
  [/\bi'd\b/g, 'i would'],
  [/\b(?:can't|cant|can not)\b/g, 'cannot'],
  [/\b(?:won't|wont)\b/g, 'will not'],
  [/\b(they|we|you|she|he)'ll\b/g, '$1 will'],
  [/\b(?:don't|dont)\b/g, 'do not'],
  [/\b(?:didn't|didnt)\b/g, 'did not'],
  [/\b(?:isn't|isnt|ain't)\b/g, 'is not'],
  [/\b(?:wasn't|wasnt)\b/g, 'was not'],
  [/\b(?:weren't|werent)\b/g, 'were not'],
  [/\b(?:couldn't|couldnt)\b/g, 'could not'],
  [/\b(?:wouldn't|wouldnt)\b/g, 'would not'],
  [/\b(?:shouldn't|shouldnt)\b/g, 'should not'],
  [/\b(?:haven't|havent)\b/g, 'have not'],
  [/\b(?:hasn't|hasnt)\b/g, 'has not'],
  [/\b(?:doesn't|doesnt)\b/g, 'does not'],
  [/\b(?:what's|whats)\b/g, 'what is'],
  [/\b(?:there's|theres)\b/g, 'there is'],
  [/\b(?:it's)\b/g, 'it is'],
  [/\b(?:life's)\b/g, 'life is'],
  [/\bwanna\b/g, 'want to'],
  [/\bgonna\b/g, 'going to'],
  [/\bgotta\b/g, 'got to'],
  [/\bu\b/g, 'you'],
  [/\bmyslef\b|\bmyselfe\b/g, 'myself'],
  [/\bb\b(?= (?:alive|here|dead|gone|around)\b)/g, 'be'],
  [/\b(?:anymroe|anymor|anymoar|nymore)\b/g, 'anymore'],
  [/\b(?:dissapear|disapear|dissappear)(s|ed|ing)?\b/g, 'disappear$1'],
  [/(^|[.!?,;] )id\b/g, '$1i would'],
  [/\bany ?more\b/g, 'anymore'],
];

/**
 * Intensifiers and hedges that never change what a sentence says about intent ("I just want to die",
 * "I'm seriously thinking about it", "nobody would even notice"): dropped, so the rules need not
 * allow for them between every two words.
 */
const FILLERS = /\b(?:just|really|simply|honestly|literally|seriously|actually|truly|totally|basically|genuinely|kinda|kind of|sort of|pretty much|even|lowkey|low key)\b/g;

/** Cyrillic and Greek letters drawn like Latin ones, as they are mixed into English words. */
const LOOKALIKES: Readonly<Record<string, string>> = {
  а: 'a', е: 'e', о: 'o', р: 'p', с: 'c', у: 'y', х: 'x', і: 'i', ј: 'j', ѕ: 's', ԁ: 'd', һ: 'h', ӏ: 'l', ԛ: 'q', ԝ: 'w',
  ο: 'o', ι: 'i', α: 'a', ν: 'v', κ: 'k', τ: 't',
};
const LOOKALIKE = new RegExp(`[${Object.keys(LOOKALIKES).join('')}]`, 'g');

/**
 * The text the rules read: NFKC, invisible characters dropped, look-alike letters read as Latin, lower
 * case, straight quotes, expanded contractions, fillers dropped, single spaces. NFKC first: the emotion
 * model's tokenizer reads fullwidth and mathematical letters ("ｉ ｗａｎｔ ｔｏ ｄｉｅ", "𝐤𝐢𝐥𝐥 𝐦𝐲𝐬𝐞𝐥𝐟") as plain
 * ones, and so must the crisis rules, which had let them, a soft hyphen inside a word, and look-alike
 * letters through.
 */
export function normalise(text: string): string {
  let t = text.normalize('NFKC').replace(INVISIBLE, '').toLowerCase().replace(LOOKALIKE, (c) => LOOKALIKES[c]!);
  for (const [re, to] of CONTRACTIONS) t = t.replace(re, to);
  return t.replace(FILLERS, ' ').replace(/\p{Extended_Pictographic}+/gu, '. ').replace(/\s+/g, ' ').trim();
}

/**
 * What each tier finds in one text, before the emotion model's reading is known (chat reads the words
 * while the engine scores them). `contextual`, `soft` and `learned` are only looked for when no decisive
 * phrasing is found, `contextual` only when `withContextual` is set, and `learned` only without soft signs.
 */
export interface CrisisReading {
  direct: CrisisSignal | undefined;
  contextual: CrisisSignal | undefined;
  soft: CrisisSignal | undefined;
  /** The learned signal (crisis-model.ts) at or above its threshold. */
  learned: CrisisSignal | undefined;
}

export function readCrisis(text: string, normalised = normalise(text), withContextual = true): CrisisReading {
  const reading: CrisisReading = { direct: undefined, contextual: undefined, soft: undefined, learned: undefined };
  if (!normalised) return reading;
  const t = normalised;
  const strongest = (rules: readonly Rule[], text = t) => {
    let best: CrisisSignal | undefined;
    for (const r of rules) {
      if ((!best || r.confidence > best.confidence) && r.pattern.test(text) && !r.unless?.test(text)) {
        best = { kind: r.kind, confidence: r.confidence, rule: r.name };
      }
    }
    return best;
  };
  const folded = fold(text);
  const frenchTopic = FRENCH_TOPIC.test(folded);
  reading.direct = strongest(RULES) ?? (!frenchTopic && deathWish(t) ? { kind: 'suicidal_intent', confidence: 0.8, rule: 'death_wish' } : undefined);
  if (reading.direct) return reading;
  const languageWords = anyLanguageRule(folded);
  reading.direct = languageWords ? strongest(LANGUAGE_RULES, folded) : undefined;
  if (reading.direct) return reading;
  if (withContextual) reading.contextual = strongest(frenchTopic ? CONTEXTUAL_BUT_TOPIC : CONTEXTUAL);
  const soft = SOFT.filter((s) => s.pattern.test(t));
  if (soft.length >= 2) {
    reading.soft = { kind: 'suicidal_intent', confidence: 0.75, rule: soft.map((s) => s.name).join('+') };
    return reading; // crisisFrom takes the soft signs before the learned signal: no need to run the model
  }
  // Another language's rule matched the words and its guard excused them ("si le PSG perd encore, je me
  // suicide mdr"): the learned signal, which knows English only, does not overrule it.
  if (languageWords) return reading;
  const model = crisisModel();
  const idiomFree = t.replace(IDIOM_SPANS, ' ');
  // What an idiom leaves ("i want to", "i") is too short for the model, which reads it as the start of a crisis.
  if (idiomFree !== t && (idiomFree.match(/\w+/g)?.length ?? 0) < 4) return reading;
  const p = model.probability(idiomFree === t ? text : idiomFree);
  if (p >= model.threshold) reading.learned = { kind: 'suicidal_intent', confidence: Math.round(p * 100) / 100, rule: 'learned' };
  return reading;
}

/**
 * The signal a reading gives once the text's affect is known: tier-3 rules count only for a distressed
 * text; the rules' own findings go before the learned signal, which knows no kinds (self-harm, someone else).
 */
export function crisisFrom(reading: CrisisReading, affect?: Affect): CrisisSignal | undefined {
  return reading.direct ?? (affect?.negative ? reading.contextual : undefined) ?? reading.soft ?? reading.learned;
}

/**
 * The strongest crisis signal in one text, or undefined. `affect` (the emotion model's reading, see
 * conversation-mode.ts) enables the tier-3 rules; without it, tiers 1 and 2, the soft signs and the
 * learned signal count.
 */
export function detectCrisis(text: string, affect?: Affect): CrisisSignal | undefined {
  if (!text) return undefined;
  return crisisFrom(readCrisis(text, normalise(text), affect?.negative === true), affect);
}
