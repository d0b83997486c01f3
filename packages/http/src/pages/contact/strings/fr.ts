import type { ContactPageStrings } from './strings.js';

/** Français. */
export const fr: ContactPageStrings = {
  lang: 'fr',
  preferencesTitle: 'Préférences e-mail',
  preferencesIntro: 'Choisissez ce que {project} envoie à {address}.',
  topicsLegend: 'Je souhaite recevoir',
  noTopics: 'Il n’y a encore rien à choisir.',
  save: 'Enregistrer mes préférences',
  saved: 'Vos préférences sont enregistrées.',
  nothingChanged: 'Rien n’a changé : vos préférences étaient déjà ainsi.',
  unsubscribeAllLegend: 'Tout',
  unsubscribeAllHint: 'Ne plus recevoir les e-mails que {project} envoie à beaucoup de personnes à la fois.',
  unsubscribeAll: 'Me désabonner de tout',
  unsubscribedAll:
    'Vous êtes désabonné de tous les e-mails que {project} envoie à beaucoup de personnes à la fois.',
  resubscribe: 'Me réabonner',
  resubscribed: 'Vous êtes de nouveau abonné.',
  formExpired:
    'Cette page est restée ouverte trop longtemps : rien n’a été enregistré. Choisissez de nouveau puis enregistrez.',
  invalidLinkTitle: 'Lien non valide',
  invalidLink: 'Ce lien n’est pas valide. Utilisez le lien de votre dernier e-mail.',
  erasedTitle: 'Plus rien ici',
  erased: 'Les données de cette adresse ont été effacées. Il n’y a plus de préférences à afficher.',
  errorStatus: 'Statut {status} · requête {request}',
  thanksTitle: 'Merci',
  thanksText:
    'Si cette adresse peut recevoir nos e-mails, vous les recevrez. Si une confirmation est nécessaire, cherchez un message avec un lien dans votre boîte de réception.',
  confirmTitle: 'Confirmez votre abonnement',
  confirmText: 'Confirmez que {address} souhaite recevoir {what} de {project}.',
  confirmButton: 'Confirmer mon abonnement',
  confirmedTitle: 'Abonnement confirmé',
  confirmedText: '{address} recevra {what} de {project}.',
  expiredTitle: 'Ce lien a expiré',
  expiredText:
    'Les liens de confirmation ne sont valables qu’un temps limité. Demandez-en un nouveau et utilisez-le rapidement.',
  resendButton: 'Envoyer un nouveau lien',
  resentTitle: 'Consultez votre boîte de réception',
  resentText:
    'Un nouveau lien de confirmation est en route vers {address} (au plus un toutes les quelques minutes).',
  confirmInvalidTitle: 'Confirmation',
  confirmInvalidText: 'Ce lien de confirmation n’est pas valide.',
  theirMail: 'les e-mails',
};
