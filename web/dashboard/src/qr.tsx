import qrcode from 'qrcode-generator';

/**
 * QR draws text as a QR code of SVG elements: the dashboard's CSP keeps
 * images to its own origin, and drawn modules need no image at all. One
 * path holds every dark module; a 4-module quiet zone lets phones read it.
 */
export function QR({ text, label }: { text: string; label: string }) {
  const code = qrcode(0, 'M');
  code.addData(text, 'Byte');
  code.make();
  const n = code.getModuleCount();
  const margin = 4;
  let d = '';
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      if (code.isDark(r, c)) d += `M${c + margin} ${r + margin}h1v1h-1z`;
    }
  }
  const size = n + 2 * margin;
  return (
    <svg
      className="size-44 flex-none rounded-md border border-line max-sm:h-auto max-sm:w-full max-sm:max-w-56"
      viewBox={`0 0 ${size} ${size}`}
      role="img"
      aria-label={label}
      shapeRendering="crispEdges"
      data-modules={n}
    >
      <rect width={size} height={size} fill="#fff" />
      <path d={d} fill="#000" />
    </svg>
  );
}
