import { type FormHTMLAttributes, useState } from 'react';

/**
 * Form is a form the page handles itself: submitting it runs onSubmit
 * instead of loading another page. The other props are the form element's
 * (aria-label, noValidate where the page says itself what is wrong, …).
 */
export function Form({ onSubmit, ...props }: Omit<FormHTMLAttributes<HTMLFormElement>, 'onSubmit'> & { onSubmit: () => unknown }) {
  return (
    <form
      {...props}
      onSubmit={(e) => {
        e.preventDefault();
        void onSubmit();
      }}
    />
  );
}

/**
 * useDraft is a filter form's draft of the filter in the URL: edited
 * freely, and replaced by the filter when that changes (back, forward, a
 * link). It is set while rendering, as React advises for state derived
 * from a changed input.
 */
export function useDraft<T>(filter: T) {
  const [draft, setDraft] = useState(filter);
  const key = JSON.stringify(filter);
  const [shown, setShown] = useState(key);
  if (shown !== key) {
    setShown(key);
    setDraft(filter);
  }
  return [draft, setDraft] as const;
}
